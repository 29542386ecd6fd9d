using System.Buffers;
using System.Diagnostics;
using System.Net.Sockets;
using XCall.Marshal;

namespace XCall.Transport.Tcp;

// Design: whoever holds the reader token (_reader) owns the socket's receive side and the receive buffer
// (_rxBuffer, _rxStart, _rxEnd): it blocks in the receive system call, parses every complete frame and hands
// each to the handler with a reader over the bytes in place. Frames therefore reach the handler in order
// and never concurrently. Normally the token belongs to a dedicated receive thread. A blocking receive on a
// thread of its own gives the lowest latency there is for a thread that is not the caller: the kernel
// wakes exactly the thread that runs the handler (an asynchronous receive adds the epoll thread and a pool
// hop, about twice the round trip on loopback). The cost is a thread per connection, fine for the tens or
// hundreds of connections an RPC process holds.
//
// Leader / follower (plain TCP, TcpOptions.CallerReadsReplies): a synchronous caller waiting for its reply
// takes the token when it is free and reads the socket itself, so its reply wakes it directly rather than
// waking the receive thread, which then wakes the caller. On a small machine that is the difference between
// two and three runnable threads per round trip. The receive thread steps aside (releases the token and
// parks) after a batch when such a caller is trying to lead (_leaderCandidates), and takes the token back
// when it has been free for a whole park period (about 1 ms, _leaderGeneration unchanged), or at once when
// callers wait without trying to lead (_syncWaiters above _leaderCandidates: they sleep, someone must read;
// a call nested in a call this connection dispatched, a callback, is always such a caller).
// A leader leaves (decrementing _syncWaiters first) and wakes the parked thread only in that case or after
// a long lead (the parked thread backs off while one leader holds on), so back-to-back synchronous calls
// keep reading on the calling thread without a wake-up; the price is that a reply to an
// asynchronous call arriving just after a burst of synchronous ones waits up to that park period. TLS links
// never lead: SslStream buffers decrypted bytes the socket's readiness cannot show.
internal sealed partial class TcpFrameChannel
{
    private const int ReceiveBufferSize = 64 * 1024;
    private const int ReaderFree = 0;
    private const int ReaderThread = 1;
    private const int ReaderCaller = 2;
    private const int MaxParkMs = 16;
    private const int MaxPollMs = 1000;

    // A leading caller with no deadline still waits for bytes in slices of this: its call may end without a
    // byte arriving (its token cancelled, its link lost), and a blocking receive would hold it until the peer
    // sends something (the next heartbeat, or nothing ever with heartbeats off).
    private const int CallCheckMs = 50;

    private static long s_leads;

    private readonly object _readerGate = new();
    private int _reader;
    private int _leaderCandidates;
    private int _syncWaiters;
    private int _nestedWaiters;
    private long _leaderGeneration;
    private byte[] _rxBuffer;
    private int _rxStart;
    private int _rxEnd;
    private int _receiving;
    private bool _candidateSeen;
    private long _receiveCount;

    /// <summary>The receive thread's loop; <paramref name="holdsReader"/>: a thread the reader token was handed to (see TcpFrameChannel.Detach.cs).</summary>
    private void ReceiveLoop(bool holdsReader)
    {
        IFrameHandler handler = _handler!;
        while (!IsClosed)
        {
            if (holdsReader || TryTakeReader(ReaderThread))
            {
                try
                {
                    if (holdsReader)
                    {
                        // Handed over: the frames that came in the same read as the detached one go first (also
                        // making room in the buffer, which may be full, before the next receive).
                        holdsReader = false;
                        DispatchBufferedOrClose(handler);
                    }
                    // Step aside after a batch that arrived while a caller was trying to lead: looked at
                    // before the batch is dispatched, since the caller stops trying once its reply is in. A
                    // thread that lost the token in the buffered frames above must not receive once more.
                    while (!t_lostReader && ReceiveOnce(handler, timeoutMs: -1) && !_candidateSeen)
                    {
                    }
                }
                finally
                {
                    if (!t_lostReader)
                    {
                        Interlocked.Exchange(ref _reader, ReaderFree);
                    }
                }
                if (t_lostReader)
                {
                    t_lostReader = false;
                    return; // the token went to a new receive thread while this one ran a detached frame's work
                }
            }
            // Stepped aside, or a caller holds the socket: wait until it should come back here.
            ParkReceiveThread();
        }
    }

    /// <summary>Roughly how many synchronous waits read their own reply (diagnostics; racy).</summary>
    internal static long Leads => Volatile.Read(ref s_leads);

    /// <summary>How many receives returned bytes (tests: read before <see cref="IsWaitingForBytes"/>).</summary>
    internal long ReceiveCount => Volatile.Read(ref _receiveCount);

    /// <summary>True while the reader is blocked waiting for bytes: everything counted by an earlier read of
    /// <see cref="ReceiveCount"/> has been dispatched or buffered (tests).</summary>
    internal bool IsWaitingForBytes => Volatile.Read(ref _receiving) != 0;

    /// <summary>Bytes received and not yet dispatched: the start of an incomplete frame (tests; racy).</summary>
    internal int BufferedBytes => Volatile.Read(ref _rxEnd) - Volatile.Read(ref _rxStart);

    /// <summary>The size of the receive buffer (tests; racy).</summary>
    internal int ReceiveBufferLength => Volatile.Read(ref _rxBuffer).Length;

    private bool TryTakeReader(int who) => Interlocked.CompareExchange(ref _reader, who, ReaderFree) == ReaderFree;

    /// <summary>
    /// Waits until the token should come back to the receive thread: it is free and no caller took it for
    /// a whole wait (about 1 ms), or callers sleep waiting for replies that someone has to read. While one
    /// leader keeps the token (a long call) the waits back off to <see cref="MaxParkMs"/>; such a leader wakes
    /// this thread when it leaves.
    /// </summary>
    private void ParkReceiveThread()
    {
        long seen = Volatile.Read(ref _leaderGeneration);
        int waitMs = 1;
        lock (_readerGate)
        {
            // A callback's nested call waits without leading: it needs a reader now, not after a park.
            if (Volatile.Read(ref _reader) == ReaderFree && Volatile.Read(ref _leaderCandidates) == 0 && Volatile.Read(ref _nestedWaiters) != 0)
            {
                return;
            }
            while (!IsClosed)
            {
                Monitor.Wait(_readerGate, waitMs);
                long generation = Volatile.Read(ref _leaderGeneration);
                bool free = Volatile.Read(ref _reader) == ReaderFree;
                if (free && Volatile.Read(ref _leaderCandidates) == 0 && (generation == seen || Volatile.Read(ref _syncWaiters) != 0))
                {
                    return;
                }
                waitMs = !free && generation == seen ? Math.Min(waitMs * 2, MaxParkMs) : 1;
                seen = generation;
            }
        }
    }

    /// <summary>Leads: reads and dispatches frames on the caller's thread until <paramref name="call"/> completes,
    /// the deadline passes or the channel closes. The caller holds the token; this releases it.</summary>
    private bool LeadUntil(IReplyWait call, long deadline, ref bool counted)
    {
        Interlocked.Increment(ref _leaderGeneration);
        s_leads++; // racy on purpose: a diagnostic count
        long started = Environment.TickCount64;
        try
        {
            IFrameHandler handler = _handler!;
            while (!call.WaitOver)
            {
                int timeoutMs = -1;
                if (deadline != long.MaxValue)
                {
                    long left = deadline - Environment.TickCount64;
                    if (left <= 0)
                    {
                        break;
                    }
                    // In slices: Socket.Poll takes at most about 35 minutes, and the loop re-checks the call.
                    timeoutMs = (int)Math.Min(left, MaxPollMs);
                }
                else if (_link is SocketLink)
                {
                    // (With TLS the socket's readiness says nothing of data the TLS stream already decrypted:
                    // there the receive blocks until bytes arrive.)
                    timeoutMs = CallCheckMs;
                }
                timeoutMs = TakeFlushAndSlice(timeoutMs);
                if (!ReceiveOnce(handler, timeoutMs))
                {
                    break;
                }
            }
            return call.IsCompleted;
        }
        finally
        {
            Interlocked.Decrement(ref _syncWaiters);
            counted = false;
            Interlocked.Exchange(ref _reader, ReaderFree);
            bool othersWaiting = Volatile.Read(ref _syncWaiters) > Volatile.Read(ref _leaderCandidates);
            if (othersWaiting || Environment.TickCount64 - started > 1)
            {
                lock (_readerGate)
                {
                    Monitor.PulseAll(_readerGate);
                }
            }
        }
    }

    /// <summary>
    /// One receive by the token holder: waits up to <paramref name="timeoutMs"/> (-1: forever) for bytes,
    /// then dispatches every complete frame. False when the channel is closed.
    /// </summary>
    private bool ReceiveOnce(IFrameHandler handler, int timeoutMs)
    {
        try
        {
            int n = SpinReceive();
            if (n < 0)
            {
                if (timeoutMs >= 0 && !_link.Socket.Poll(TimeSpan.FromMilliseconds(timeoutMs), SelectMode.SelectRead))
                {
                    return !IsClosed;
                }
                Volatile.Write(ref _receiving, 1);
                n = _link.Receive(_rxBuffer.AsSpan(_rxEnd));
                Volatile.Write(ref _receiving, 0);
            }
            if (n == 0)
            {
                CloseFromReader(new XCallDisconnectedException(_endpoint, "the peer closed the connection"));
                return false;
            }
            _rxEnd += n;
            _candidateSeen = Volatile.Read(ref _leaderCandidates) != 0;
            Volatile.Write(ref _receiveCount, _receiveCount + 1);
            DispatchBuffered(handler);
            return !IsClosed && !t_lostReader;
        }
        catch (Exception ex)
        {
            Volatile.Write(ref _receiving, 0);
            if (!IsClosed)
            {
                CloseFromReader(TranslateError(ex));
            }
            return false;
        }
    }

    /// <summary>
    /// Before a blocking receive on a plain socket: tries a receive that does not block, again and again for up to
    /// <see cref="TcpOptions.ReplySpinTime"/>, so a frame that follows closely (the next call of a caller in a loop, a
    /// reply to a short method) is read with one system call and without the thread going to sleep and being woken
    /// by the kernel, which costs more than the round trip itself on an idle machine. With TLS the socket's bytes say
    /// nothing about decrypted data: no spin.
    /// </summary>
    /// <returns>The bytes received into the buffer (0: the peer closed its side), or a negative value when nothing
    /// came within the spin (or the receive failed): the caller then receives blocking.</returns>
    /// <remarks>The spin yields its core every <see cref="SpinTurnsPerYield"/> turns: a yield is a system call as a receive
    /// is, and one at every turn would stretch the time between two looks at the socket, so the time a frame waits to be
    /// noticed; one every few turns still lets a thread waiting for this core (a continuation of the frame just read,
    /// say) have it after a few receives.</remarks>
    private int SpinReceive()
    {
        if (_replySpinTicks <= 0 || _link is not SocketLink socket)
        {
            return SocketLink.Failed;
        }
        Span<byte> free = _rxBuffer.AsSpan(_rxEnd);
        long until = 0;
        for (int i = 0; ; i++)
        {
            int n = socket.ReceiveIfReady(free);
            if (n != SocketLink.NothingYet)
            {
                return n;
            }
            long now = Stopwatch.GetTimestamp();
            if (i == 0)
            {
                until = now + _replySpinTicks;
            }
            else if (now >= until || IsClosed)
            {
                return SocketLink.NothingYet;
            }
            if (i % SpinTurnsPerYield == SpinTurnsPerYield - 1)
            {
                Thread.Yield();
            }
        }
    }

    /// <summary>
    /// Dispatches the complete frames in the buffer and makes room for the rest. While another complete frame
    /// follows the one dispatched, the frames this thread commits (inline replies) are held back and leave in
    /// one write after the last of them (see the send design note).
    /// </summary>
    private void DispatchBuffered(IFrameHandler handler)
    {
        byte[] buffer = _rxBuffer;
        int start = _rxStart;
        int end = _rxEnd;
        try
        {
            if (!DispatchCompleteFrames(handler, ref buffer, ref start, ref end))
            {
                if (!t_lostReader)
                {
                    HoldFrames(false); // (a thread that lost the token touches none of the receive state)
                }
                return;
            }
        }
        catch
        {
            HoldFrames(false); // the channel closes: what is held never leaves
            throw;
        }
        SendHeldFrames();

        if (start == end)
        {
            start = end = 0;
            if (buffer.Length > ReceiveBufferSize)
            {
                // A large frame is done: give its buffer back rather than hold it for the connection's life
                // (past BoundedArrayPool.MaxPooledBytes, to the GC rather than the pool).
                BoundedArrayPool.Return(buffer);
                buffer = ArrayPool<byte>.Shared.Rent(ReceiveBufferSize);
            }
        }
        else if (buffer.Length - end < FrameCodec.PrefixSize || start > buffer.Length / 2)
        {
            buffer.AsSpan(start, end - start).CopyTo(buffer);
            end -= start;
            start = 0;
        }
        _rxBuffer = buffer;
        _rxStart = start;
        _rxEnd = end;
    }

    /// <summary>Hands every complete frame to the handler; false when the channel closed meanwhile.</summary>
    private bool DispatchCompleteFrames(IFrameHandler handler, ref byte[] buffer, ref int start, ref int end)
    {
        int maxFrame = _options.MaxFrameSize;
        MarshalLimits limits = handler.Limits;
        while (end - start >= FrameCodec.PrefixSize)
        {
            int length = FrameCodec.ReadLength(buffer.AsSpan(start));
            FrameHeader header = FrameCodec.ReadHeader(buffer.AsSpan(start + FrameCodec.LengthSize));
            ValidatePrefix(length, header, maxFrame);
            int total = FrameCodec.PrefixSize + length;
            if (end - start < total)
            {
                if (buffer.Length - start < total)
                {
                    buffer = MakeRoom(buffer, ref start, ref end, total);
                }
                return true;
            }
            if (Volatile.Read(ref _closed) != 0)
            {
                return false;
            }
            _rxStart = start + total; // consumed before the handler runs: a throw must not replay it
            HoldFrames(HasCompleteFrame(buffer.AsSpan(start + total, end - start - total)));
            int detaches = t_detaches;
            Dispatch(handler, header, buffer.AsSpan(start + FrameCodec.PrefixSize, length), limits);
            if (t_detaches != detaches)
            {
                // The handler detached the frame and ran its work here; a wait inside it may have received.
                if (!Detached.End())
                {
                    t_lostReader = true;
                    return false;
                }
                buffer = _rxBuffer;
                start = _rxStart;
                end = _rxEnd;
                continue;
            }
            start += total;
        }
        return true;
    }

    /// <summary>True when <paramref name="bytes"/> start with a whole frame (its length not yet validated).</summary>
    private static bool HasCompleteFrame(ReadOnlySpan<byte> bytes) =>
        bytes.Length >= FrameCodec.PrefixSize && (uint)FrameCodec.ReadLength(bytes) <= (uint)(bytes.Length - FrameCodec.PrefixSize);

    private void CloseFromReader(Exception error)
    {
        try
        {
            // The peer answering our goodbye by closing is our own orderly close, not a lost connection.
            Close(Volatile.Read(ref _disposing) != 0 ? null : error);
        }
        catch (Exception)
        {
            // The handler's OnClosed threw on the receive thread (or inside a caller's wait): nobody can take it.
        }
    }

    private void ValidatePrefix(int length, in FrameHeader header, int maxFrame)
    {
        if ((uint)length > (uint)maxFrame)
        {
            throw new XCallProtocolException($"{_endpoint} sent a frame of {length} bytes; the limit is {maxFrame} (TcpOptions.MaxFrameSize).");
        }
        if (header.Version != FrameHeader.CurrentVersion)
        {
            throw new XCallProtocolException($"{_endpoint} sent a frame of version {header.Version}; this build speaks {FrameHeader.CurrentVersion}.");
        }
        if (header.Kind == 0)
        {
            throw new XCallProtocolException($"{_endpoint} sent a frame of kind 0.");
        }
        if ((header.Flags & FrameFlags.CallerWaits) != 0)
        {
            // The flag lets a frame carry arrays lent by cross-memory attach, which only shared memory does.
            throw new XCallProtocolException($"{_endpoint} sent a frame with the CallerWaits flag, which TCP never carries (nothing is lent over TCP).");
        }
    }

    /// <summary>
    /// Makes room for more of an incomplete frame of <paramref name="total"/> bytes that does not fit where it
    /// starts: moves it to the front, or grows the buffer to twice the bytes of it that arrived (never beyond
    /// the frame). The announced length alone allocates nothing: a peer that announces a large frame and sends
    /// little of it makes this side hold at most four times what it sent (twice, rounded up to the pool's next
    /// power of two), not the frame. A frame that does arrive whole is copied about once more in all while the
    /// buffer doubles (docs/remoting.md, "Wire").
    /// </summary>
    private static byte[] MakeRoom(byte[] buffer, ref int start, ref int end, int total)
    {
        int pending = end - start;
        int wanted = (int)Math.Min(total, Math.Max(ReceiveBufferSize, 2L * pending));
        if (wanted > buffer.Length)
        {
            byte[] larger = BoundedArrayPool.Rent<byte>(wanted);
            buffer.AsSpan(start, pending).CopyTo(larger);
            BoundedArrayPool.Return(buffer);
            buffer = larger;
        }
        else if (start != 0)
        {
            buffer.AsSpan(start, pending).CopyTo(buffer);
        }
        else
        {
            return buffer; // at least half of it is still free behind the frame
        }
        start = 0;
        end = pending;
        return buffer;
    }

    private void Dispatch(IFrameHandler handler, in FrameHeader header, ReadOnlySpan<byte> payload, MarshalLimits limits)
    {
        switch (header.Kind)
        {
            case FrameKind.Ping:
                if (!TrySendControlNow(FrameKind.Pong, header.CallId))
                {
                    _pongCallId = header.CallId;
                    QueueControl(ref _pongOwed);
                }
                break;
            case FrameKind.Pong:
                break;
            case FrameKind.Goodbye:
                Close(null);
                break;
            default:
                var reader = new MarshalReader(payload, limits);
                handler.OnFrame(header, ref reader);
                break;
        }
    }

    private Exception TranslateError(Exception error) => error switch
    {
        XCallProtocolException or XCallDisconnectedException => error,
        SocketException { SocketErrorCode: SocketError.ConnectionReset } => new XCallDisconnectedException(_endpoint, "the connection was reset by the peer", error),
        SocketException se => new XCallDisconnectedException(_endpoint, $"socket error {se.SocketErrorCode}", error),
        IOException => new XCallDisconnectedException(_endpoint, error.Message, error),
        ObjectDisposedException => new XCallDisconnectedException(_endpoint, "the socket was closed", error),
        _ => error,
    };
}
