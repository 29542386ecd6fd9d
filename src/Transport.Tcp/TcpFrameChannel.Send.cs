using System.Buffers;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Net.Sockets;
using System.Runtime.CompilerServices;

namespace XCall.Transport.Tcp;

// Design: _sendLock is held from BeginFrame to CommitFrame / AbortFrame, so frames never interleave and the
// frame being written always sits at the end of _filling. At most one thread, the flusher (_flushing),
// writes to the socket, and it does so without the lock: it swaps _filling and _spare under the lock,
// releases it, sends the batch, and takes the lock again to look for more. A sender that commits while
// nobody flushes becomes the flusher and sends its frame at once (one system call, the lowest latency
// for a caller alone); a sender that commits while a flush is running only appends, and the flusher takes
// every frame appended meanwhile in its next single write (batching for pipelined callers).
// Two cases batch although nobody flushes yet:
// - CommitFrameBatched (an asynchronous call pipelined behind others) makes a pool thread the flusher
//   (_poolFlusher) instead of writing on the caller's thread, so the caller goes on committing frames
//   that the pool thread then takes many at a time. Until that pool thread begins, the flush is the pool's
//   (_poolOwnsFlush, also after a flusher hands the rest to the pool), and a thread that needs its own frame
//   out takes it and writes one batch, the one with its frame, under that frame's deadline: a CommitFrame, the
//   reader's held replies, a BeginFrame waiting for room (woken by the hand-off; a timeout closes the
//   connection, as any send deadline does), the goodbye, and a caller waiting for a reply whose frame is still
//   queued (_swaps has not moved since its commit: t_queuedOn / t_queuedAtSwap, one record per thread). The
//   pool thread, when it comes, finds the flush gone and returns. So no frame a thread waits on depends on
//   the thread pool, which threads blocked in synchronous calls may be starving.
// - The reader holds back the frames that its own thread commits (inline replies) while more complete
//   frames wait in the receive buffer (_holdingThread, see DispatchBuffered): the reply to the last frame
//   of the buffer, or SendHeldFrames after it, writes them all at once. At most SendChunkSize bytes are
//   held; a commit beyond that writes at once.
// Back-pressure: while a flush runs (the socket's buffer is full when the peer reads slowly) and _filling
// holds HighWater bytes, BeginFrame waits on the lock's condition; the flusher pulses after each swap.
// Invariant: when nobody flushes, _filling holds nothing but the open frame and frames the reader holds.
internal sealed partial class TcpFrameChannel
{
    private const int SendChunkSize = 64 * 1024;
    private const long HighWater = 1024 * 1024;
    private const int MaxFlushRounds = 16;
    private const int GoodbyeTimeoutMs = 200;

    private readonly object _sendLock = new();
    private readonly FrameWriter _writer;
    private readonly PoolFlusher _poolFlusher;
    private SendBuffer _filling;
    private SendBuffer _spare;
    private SendBuffer.Mark _frameStart;
    private long _framePayload;
    private bool _frameOpen;
    private bool _flushing;
    private bool _poolOwnsFlush; // the flush (_flushing) is a queued pool work item's that has not begun
    private long _swaps; // batches taken from _filling: a frame queued at count N has left once it moved

    // The channel this thread committed a frame to last that stayed queued, and _swaps then (see the design note).
    [ThreadStatic]
    private static TcpFrameChannel? t_queuedOn;

    [ThreadStatic]
    private static long t_queuedAtSwap;

    [ThreadStatic]
    private static long t_queuedDeadline; // that frame's send deadline (0: none)
    private int _waitingForRoom;
    private long _sendCount;
    private int _holdingThread;
    private bool _held;
    private long _frameDeadline; // the open frame's send deadline (0: none), for the write that sends it

    public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline)
    {
        Monitor.Enter(_sendLock);
        if (_frameOpen || _closed != 0 || (_flushing && _filling.Length >= HighWater))
        {
            WaitToBeginUnsynchronized(deadline);
        }
        try
        {
            Span<byte> prefix = _filling.GetSpan(FrameCodec.PrefixSize);
            _frameStart = _filling.End;
            FrameCodec.WritePrefix(prefix, 0, header);
            _filling.Advance(FrameCodec.PrefixSize);
        }
        catch
        {
            Monitor.Exit(_sendLock);
            throw;
        }
        _framePayload = 0;
        _frameOpen = true;
        _frameDeadline = deadline;
        return _writer;
    }

    public override void CommitFrame()
    {
        if (!CompleteFrameAndStayQueued(batched: false, out bool tookFromPool))
        {
            _flushing = true;
            FlushAndExit(_frameDeadline, oneBatch: tookFromPool); // (the pool's backlog beyond this frame's batch stays the pool's)
        }
    }

    /// <summary>Commits like <see cref="CommitFrame"/>, but a pool thread writes the frame, with those committed meanwhile.</summary>
    public override void CommitFrameBatched()
    {
        if (!CompleteFrameAndStayQueued(batched: true, out _))
        {
            _flushing = true;
            NoteQueuedFrame();
            HandFlushToPoolAndExit();
        }
    }

    /// <summary>With the lock held: the frame this thread just committed waits in <c>_filling</c> for the next batch.</summary>
    private void NoteQueuedFrame()
    {
        t_queuedOn = this;
        t_queuedAtSwap = _swaps;
        t_queuedDeadline = _frameDeadline;
    }

    /// <summary>True while a frame this thread committed to this channel waits in <c>_filling</c> (read without the lock: a
    /// hint that a later look under the lock confirms).</summary>
    private bool OwnFrameQueued => ReferenceEquals(t_queuedOn, this) && Volatile.Read(ref _swaps) == t_queuedAtSwap;

    /// <summary>With the lock held and <c>_flushing</c> set: the flush becomes the pool's (see the design note); releases the lock.</summary>
    private void HandFlushToPoolAndExit()
    {
        _poolOwnsFlush = true;
        if (_waitingForRoom > 0)
        {
            Monitor.PulseAll(_sendLock); // a sender waiting for room may take the flush now
        }
        Monitor.Exit(_sendLock);
        if (HeldPoolFlushes is { } held)
        {
            held.Enqueue(_poolFlusher);
            return;
        }
        ThreadPool.UnsafeQueueUserWorkItem(_poolFlusher, preferLocal: false);
    }

    /// <summary>Tests: pool flushes are queued here instead of on the thread pool (a pool that runs none of them).</summary>
    internal System.Collections.Concurrent.ConcurrentQueue<IThreadPoolWorkItem>? HeldPoolFlushes { get; set; }

    /// <summary>
    /// In a wait for a reply: when this thread's frame is still queued behind a pool flush that has not begun (see the
    /// design note), writes the batch that holds it, bounded by that frame's send deadline, and leaves the rest to the pool.
    /// </summary>
    private void TakeFlushFromPool()
    {
        if (!Volatile.Read(ref _poolOwnsFlush) || !OwnFrameQueued)
        {
            return;
        }
        Monitor.Enter(_sendLock);
        if (!_poolOwnsFlush || _swaps != t_queuedAtSwap)
        {
            Monitor.Exit(_sendLock);
            return;
        }
        _poolOwnsFlush = false;
        try
        {
            FlushAndExit(t_queuedDeadline, oneBatch: true);
        }
        catch (Exception ex) when (ex is XCallDisconnectedException or XCallTimeoutException)
        {
            // The write failed or timed out and closed the channel: the wait learns it from its call.
        }
    }

    /// <summary>
    /// Before a reading waiter's receive: takes the pool's flush when the waiter's frame is in it (<see cref="TakeFlushFromPool"/>),
    /// and returns the receive's poll slice: while that frame is still queued, at most <see cref="CallCheckMs"/>, so a later
    /// hand-off of it to the pool is taken soon.
    /// </summary>
    private int TakeFlushAndSlice(int timeoutMs)
    {
        TakeFlushFromPool();
        return OwnFrameQueued && _link is SocketLink ? (timeoutMs < 0 ? CallCheckMs : Math.Min(timeoutMs, CallCheckMs)) : timeoutMs;
    }

    /// <summary>
    /// Completes the open frame. Returns true, with the lock released, when the frame may stay queued: a flush
    /// in progress takes it, or the reader holds it back. Returns false, with the lock held, when the caller must
    /// start the flush; a commit that is not <paramref name="batched"/> takes a flush the pool has not begun
    /// (<paramref name="tookFromPool"/>).
    /// </summary>
    private bool CompleteFrameAndStayQueued(bool batched, out bool tookFromPool)
    {
        tookFromPool = false;
        if (!_frameOpen || !Monitor.IsEntered(_sendLock))
        {
            ThrowNoFrame();
        }
        _frameOpen = false;
        if (_closed != 0)
        {
            _filling.Truncate(_frameStart);
            Monitor.Exit(_sendLock);
            throw ClosedError();
        }
        FrameCodec.PatchLength(_filling.At(_frameStart, FrameCodec.LengthSize), (int)_framePayload);
        if (_poolOwnsFlush && !batched)
        {
            _poolOwnsFlush = false; // the pool has not begun: this thread writes the frames queued for it with its own
            tookFromPool = true;
            return false;
        }
        if (!_flushing && !TryHoldFrameUnsynchronized())
        {
            return false;
        }
        NoteQueuedFrame();
        Monitor.Exit(_sendLock);
        return true;
    }

    /// <summary>Keeps the frame just committed queued when this thread is the reader holding back its frames and they still fit in a chunk.</summary>
    private bool TryHoldFrameUnsynchronized()
    {
        if (_holdingThread != Environment.CurrentManagedThreadId || _filling.Length >= SendChunkSize)
        {
            return false;
        }
        _held = true;
        return true;
    }

    /// <summary>
    /// Called by the reader around each dispatch: with <paramref name="hold"/>, frames this thread commits stay
    /// queued (more frames wait to be dispatched, whose replies can share the write); without, they go at once.
    /// </summary>
    private void HoldFrames(bool hold) => _holdingThread = hold ? Environment.CurrentManagedThreadId : 0;

    /// <summary>Stops holding frames and writes the held ones, unless another thread's flush took them already.</summary>
    private void SendHeldFrames()
    {
        _holdingThread = 0;
        if (!_held)
        {
            return;
        }
        Monitor.Enter(_sendLock);
        _held = false;
        if ((_flushing && !_poolOwnsFlush) || _closed != 0 || _filling.Length == 0)
        {
            Monitor.Exit(_sendLock);
            return;
        }
        bool tookFromPool = _poolOwnsFlush;
        _poolOwnsFlush = false;
        _flushing = true;
        FlushAndExit(oneBatch: tookFromPool); // the reader writes one batch of the pool's backlog at most, and reads on
    }

    public override void AbortFrame()
    {
        if (!_frameOpen || !Monitor.IsEntered(_sendLock))
        {
            ThrowNoFrame();
        }
        _frameOpen = false;
        _filling.Truncate(_frameStart);
        AssertInvariantsUnsynchronized();
        Monitor.Exit(_sendLock);
    }

    [Conditional("DEBUG")]
    private void AssertInvariantsUnsynchronized()
    {
        Debug.Assert(Monitor.IsEntered(_sendLock));
        Debug.Assert(_flushing || _frameOpen || _filling.Length == 0 || _closed != 0 || _held, "frames left behind with nobody flushing");
        Debug.Assert(_spare.Length == 0 || _flushing, "the spare buffer holds bytes outside a flush");
        Debug.Assert(!_poolOwnsFlush || _flushing, "a pool flush owned with nobody flushing");
    }

    /// <summary>Writes begun so far (each sends a batch of frames); the heartbeat watches it change.</summary>
    internal long SendCount => Volatile.Read(ref _sendCount);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void WaitToBeginUnsynchronized(long deadline)
    {
        if (_frameOpen)
        {
            // Only this thread can hold the lock with a frame open: the lock is re-entrant.
            Monitor.Exit(_sendLock);
            throw FrameAlreadyOpen(_endpoint);
        }
        while (true)
        {
            if (_closed != 0)
            {
                Monitor.Exit(_sendLock);
                throw ClosedError();
            }
            if (!_flushing || _filling.Length < HighWater)
            {
                return;
            }
            if (_poolOwnsFlush)
            {
                // The frames ahead wait for a pool thread that has not begun: this thread writes a batch of them,
                // bounded by its deadline (a timeout closes the connection, as any send deadline does).
                _poolOwnsFlush = false;
                FlushAndExit(deadline, oneBatch: true);
                Monitor.Enter(_sendLock);
                continue;
            }
            _waitingForRoom++;
            bool woken = Monitor.Wait(_sendLock, Deadline.RemainingMs(deadline));
            _waitingForRoom--;
            if (!woken && _flushing && _filling.Length >= HighWater && _closed == 0)
            {
                Monitor.Exit(_sendLock);
                throw new XCallTimeoutException(_endpoint, "the frames queued before this one were not taken within the call's timeout (the peer takes no data)");
            }
        }
    }

    /// <summary>
    /// Called by the flusher with the lock held; sends batches until nothing is left, and returns with the
    /// lock released. After <see cref="MaxFlushRounds"/> batches (after the first with a deadline or
    /// <paramref name="oneBatch"/>) it hands the work to the thread pool, so a caller is not kept writing other
    /// callers' frames forever.
    /// </summary>
    private void FlushAndExit(long deadline = 0, bool oneBatch = false)
    {
        int rounds = 0;
        while (true)
        {
            SendBuffer batch = _filling;
            _filling = _spare;
            _spare = batch;
            _swaps++;
            if (_waitingForRoom > 0)
            {
                Monitor.PulseAll(_sendLock);
            }
            Monitor.Exit(_sendLock);

            Volatile.Write(ref _sendCount, _sendCount + 1);
            Exception? error = null;
            try
            {
                if (deadline == 0)
                {
                    batch.WriteTo(_link);
                }
                else
                {
                    WriteBefore(batch, deadline);
                }
            }
            catch (Exception ex) when (ex is SocketException or IOException or ObjectDisposedException or XCallTimeoutException)
            {
                error = ex;
            }
            batch.Reset();

            Monitor.Enter(_sendLock);
            if (error is not null || _closed != 0 || _filling.Length == 0)
            {
                _flushing = false;
                if (error is not null)
                {
                    _filling.Reset(); // the connection closes below: what was queued behind the failed write never leaves
                }
                AssertInvariantsUnsynchronized();
                if (_waitingForRoom > 0)
                {
                    Monitor.PulseAll(_sendLock);
                }
                Monitor.Exit(_sendLock);
                if (error is not null)
                {
                    if (error is XCallTimeoutException timedOut)
                    {
                        // Part of a frame may be on the wire: nothing can follow it, the connection closes.
                        Close(timedOut);
                        throw timedOut;
                    }
                    Close(TranslateError(error));
                    throw ClosedError();
                }
                return;
            }
            if (++rounds == MaxFlushRounds || deadline != 0 || oneBatch)
            {
                // (With a deadline, or one batch asked: the first batch held this caller's frame; what came after it
                // is other callers' frames, which its deadline must not cut off: the pool writes them, unbounded,
                // unless another thread whose frame is among them takes the flush first.)
                HandFlushToPoolAndExit();
                return;
            }
        }
    }

    /// <summary>A flush bounded by a call's send deadline: the socket's send timeout is set for the write and cleared after it.</summary>
    private void WriteBefore(SendBuffer batch, long deadline)
    {
        int left = Deadline.RemainingMs(deadline);
        if (left == 0)
        {
            throw SendTimedOut();
        }
        Socket socket = _link.Socket;
        socket.SendTimeout = left;
        try
        {
            batch.WriteTo(_link);
        }
        catch (Exception ex) when (IsSendTimeout(ex))
        {
            throw SendTimedOut();
        }
        finally
        {
            try
            {
                socket.SendTimeout = 0;
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
            {
                // The socket is gone: the write's own outcome tells.
            }
        }
    }

    private static bool IsSendTimeout(Exception ex) =>
        (ex as SocketException ?? ex.InnerException as SocketException)?.SocketErrorCode is SocketError.TimedOut or SocketError.WouldBlock;

    private XCallTimeoutException SendTimedOut() =>
        new(_endpoint, "the peer took no data within the call's timeout (its receive window and our socket buffer stayed full); the connection is closed");

    private Span<byte> GetFrameSpan(int sizeHint)
    {
        if (!_frameOpen)
        {
            ThrowNoFrame();
        }
        if (_framePayload + Math.Max(sizeHint, 1) > _options.MaxFrameSize)
        {
            ThrowFrameTooLarge(_framePayload + Math.Max(sizeHint, 1));
        }
        return _filling.GetSpan(sizeHint);
    }

    private Memory<byte> GetFrameMemory(int sizeHint)
    {
        GetFrameSpan(sizeHint);
        return _filling.GetMemory(sizeHint);
    }

    private void AdvanceFrame(int count)
    {
        if (!_frameOpen)
        {
            ThrowNoFrame();
        }
        _filling.Advance(count);
        _framePayload += count;
        if (_framePayload > _options.MaxFrameSize)
        {
            ThrowFrameTooLarge(_framePayload);
        }
    }

    /// <summary>
    /// Tells the peer this side closes on purpose, so it reports an orderly close rather than a lost
    /// connection. Best effort, bounded by <see cref="GoodbyeTimeoutMs"/>: it waits that long at most for a
    /// frame being written or a flush in progress (whose frames must go first) and for the socket to take it;
    /// frames the reader holds go out just before it.
    /// </summary>
    private void TrySendGoodbye()
    {
        long deadline = Environment.TickCount64 + GoodbyeTimeoutMs;
        if (!Monitor.TryEnter(_sendLock, GoodbyeTimeoutMs))
        {
            return;
        }
        try
        {
            while (_closed == 0)
            {
                if (_poolOwnsFlush)
                {
                    _poolOwnsFlush = false; // the pool has not begun: the goodbye write below takes what it was to write
                    _flushing = false;
                }
                if (!_flushing)
                {
                    break;
                }
                long left = deadline - Environment.TickCount64;
                if (left <= 0)
                {
                    return;
                }
                _waitingForRoom++;
                Monitor.Wait(_sendLock, (int)left);
                _waitingForRoom--;
            }
            if (_closed != 0 || _frameOpen)
            {
                return;
            }
            Span<byte> prefix = _filling.GetSpan(FrameCodec.PrefixSize);
            FrameCodec.WritePrefix(prefix, 0, new FrameHeader(FrameKind.Goodbye, 0, 0, 0));
            _filling.Advance(FrameCodec.PrefixSize);
            _link.LimitSendTime(GoodbyeTimeoutMs);
            _swaps++;
            _filling.WriteTo(_link);
            _filling.Reset();
        }
        catch (Exception ex) when (ex is SocketException or IOException or ObjectDisposedException)
        {
            // The peer will see the connection end without the goodbye: same outcome, less polite.
        }
        finally
        {
            Monitor.Exit(_sendLock);
        }
    }

    /// <summary>
    /// Sends a frame with no payload on the calling thread if that cannot block: nobody is writing a frame
    /// or flushing, and the socket has room. Returns false (nothing sent) otherwise.
    /// </summary>
    private bool TrySendControlNow(FrameKind kind, ulong callId)
    {
        if (!Monitor.TryEnter(_sendLock))
        {
            return false;
        }
        if (_flushing || _frameOpen || _closed != 0 || !IsWritable())
        {
            Monitor.Exit(_sendLock);
            return _closed != 0; // nothing to send on a closed channel
        }
        Span<byte> prefix = _filling.GetSpan(FrameCodec.PrefixSize);
        FrameCodec.WritePrefix(prefix, 0, new FrameHeader(kind, callId, 0, 0));
        _filling.Advance(FrameCodec.PrefixSize);
        _flushing = true;
        try
        {
            FlushAndExit();
        }
        catch (XCallDisconnectedException)
        {
            // The write failed and closed the channel; nobody to tell.
        }
        return true;
    }

    private bool IsWritable()
    {
        try
        {
            return _link.Socket.Poll(0, SelectMode.SelectWrite);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            return false;
        }
    }

    private void SendControl(FrameKind kind, ulong callId)
    {
        try
        {
            BeginFrame(new FrameHeader(kind, callId, 0, 0));
            CommitFrame();
        }
        catch (XCallDisconnectedException)
        {
            // Closed meanwhile: nobody to tell.
        }
    }

    [DoesNotReturn]
    private static void ThrowNoFrame() =>
        throw new InvalidOperationException("No frame is begun on this thread: call BeginFrame first.");

    [DoesNotReturn]
    private void ThrowFrameTooLarge(long size) =>
        throw new InvalidOperationException($"The frame to {_endpoint} would be {size} bytes, more than TcpOptions.MaxFrameSize ({_options.MaxFrameSize}).");

    /// <summary>The output <see cref="BeginFrame(in FrameHeader, long)"/> hands out: the open frame at the end of the send buffer.</summary>
    private sealed class FrameWriter(TcpFrameChannel channel) : IBufferWriter<byte>
    {
        public void Advance(int count) => channel.AdvanceFrame(count);

        public Memory<byte> GetMemory(int sizeHint = 0) => channel.GetFrameMemory(sizeHint);

        public Span<byte> GetSpan(int sizeHint = 0) => channel.GetFrameSpan(sizeHint);
    }

    /// <summary>
    /// Flushes on a pool thread: for <see cref="CommitFrameBatched"/>, and to go on after a caller flushed
    /// <see cref="MaxFlushRounds"/> batches. Flushes only while the flush is the pool's (<c>_poolOwnsFlush</c>, set by
    /// the hand-off that queued this or a later one); a thread that took the flush first leaves it nothing to do.
    /// </summary>
    private sealed class PoolFlusher(TcpFrameChannel channel) : IThreadPoolWorkItem
    {
        public void Execute()
        {
            Monitor.Enter(channel._sendLock);
            if (!channel._poolOwnsFlush)
            {
                Monitor.Exit(channel._sendLock); // a thread that needed its frame out took the flush
                return;
            }
            channel._poolOwnsFlush = false;
            try
            {
                channel.FlushAndExit();
            }
            catch (Exception)
            {
                // The channel closed and told its handler (XCallDisconnectedException), or the handler's
                // OnClosed threw: there is no caller on this pool thread to tell.
            }
        }
    }
}
