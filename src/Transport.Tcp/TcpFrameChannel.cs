using System.Buffers;
using System.Diagnostics;

namespace XCall.Transport.Tcp;

/// <summary>
/// A <see cref="FrameChannel"/> over one established TCP connection (plain or TLS): frames are an int32
/// little-endian payload length, the 24-byte <see cref="FrameHeader"/>, then the payload.
/// </summary>
/// <remarks>
/// Threads: callers send (<c>TcpFrameChannel.Send.cs</c>); one dedicated thread per channel receives
/// (<c>TcpFrameChannel.Receive.cs</c>) and runs the handler, unless a synchronous caller reads its own
/// reply; the shared <see cref="HeartbeatScheduler"/> thread watches liveness
/// (<c>TcpFrameChannel.Heartbeat.cs</c>). The first close wins: it records the
/// reason, closes the socket (which ends the receive thread and fails blocked senders) and tells the
/// handler, exactly once, from the thread that closed.
/// </remarks>
internal sealed partial class TcpFrameChannel : FrameChannel
{
    private const int SleepSliceMs = 50;

    /// <summary>Turns of the receive spin (<see cref="SpinReceive"/>) per yield of its core.</summary>
    private const int SpinTurnsPerYield = 8;

    private static long s_lostWakeups;

    private readonly TcpLink _link;
    private readonly TcpOptions _options;
    private readonly string _endpoint;
    private readonly long _replySpinTicks;
    private readonly bool _callersMayRead;
    private IFrameHandler? _handler;
    private int _closed;
    private int _closeDelivered;
    private int _disposing;
    private Exception? _closeReason;

    public TcpFrameChannel(TcpLink link, string endpoint, TcpOptions options)
    {
        _link = link;
        _endpoint = endpoint;
        _options = options;
        _replySpinTicks = (long)(options.ReplySpinTime.TotalSeconds * Stopwatch.Frequency);
        _callersMayRead = options.CallerReadsReplies && link is SocketLink;
        _rxBuffer = ArrayPool<byte>.Shared.Rent(ReceiveBufferSize);
        _filling = new SendBuffer(SendChunkSize);
        _spare = new SendBuffer(SendChunkSize);
        _writer = new FrameWriter(this);
        _poolFlusher = new PoolFlusher(this);
        _controlSender = new ControlSender(this);
        StartHeartbeat();
    }

    public override string RemoteEndpoint => _endpoint;

    /// <summary>True once the channel is closed, by either side or by the heartbeat.</summary>
    internal bool IsClosed => Volatile.Read(ref _closed) != 0;

    /// <summary>Sleeps that ended on their slice with the call already complete: wake-ups the completer lost (diagnostics).</summary>
    internal static long LostWakeups => Interlocked.Read(ref s_lostWakeups);

    /// <summary>Why the channel closed (null after an orderly close, or while open).</summary>
    internal Exception? CloseReason => _closeReason;

    /// <summary>The byte stream under the channel (tests reach the socket through it).</summary>
    internal TcpLink Link => _link;

    public override void Start(IFrameHandler handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        if (Interlocked.CompareExchange(ref _handler, handler, null) is not null)
        {
            throw new InvalidOperationException("The channel is already started.");
        }
        if (IsClosed)
        {
            DeliverClosed();
            return;
        }
        var thread = new Thread(static s => ((TcpFrameChannel)s!).ReceiveLoop(holdsReader: false))
        {
            IsBackground = true,
            Name = "XCall tcp receive",
        };
        _receiveThreadId = thread.ManagedThreadId;
        thread.UnsafeStart(this);
    }

    /// <summary>
    /// Waits for a synchronous call's reply. For <see cref="TcpOptions.ReplySpinTime"/> the caller spins, and
    /// with <see cref="TcpOptions.CallerReadsReplies"/> tries to take the socket's receive side (it then reads
    /// until its reply is in, see the receive design note); after that it sleeps until the reply is delivered.
    /// </summary>
    public override bool WaitForReply(IReplyWait call, long deadline)
    {
        if (call.WaitOver)
        {
            return true;
        }
        if (_holdingThread == Environment.CurrentManagedThreadId)
        {
            // A call made by a handler the reader runs: its frame must leave before anyone waits for the reply.
            SendHeldFrames();
        }
        TakeFlushFromPool();
        if (_detached is { RunsHere: true } detached)
        {
            return WaitDetached(call, deadline, detached);
        }
        IFrameHandler? handler = Volatile.Read(ref _handler);
        if (!_callersMayRead || handler is null)
        {
            return SpinThenWait(call, deadline);
        }
        if (call.IsNested)
        {
            // A call nested in a call this connection dispatched (a callback) does not ask for the socket: the
            // receive thread reads its reply right after the call it is dispatching, and stepping aside for it
            // would leave the next incoming call unread until the parked receive thread looks again (~1 ms).
            // It counts as a caller that waits without leading, so a parked receive thread comes back for it.
            Interlocked.Increment(ref _syncWaiters);
            Interlocked.Increment(ref _nestedWaiters);
            try
            {
                if (Volatile.Read(ref _reader) == ReaderFree)
                {
                    lock (_readerGate)
                    {
                        Monitor.PulseAll(_readerGate);
                    }
                }
                return SpinThenWait(call, deadline);
            }
            finally
            {
                Interlocked.Decrement(ref _nestedWaiters);
                Interlocked.Decrement(ref _syncWaiters);
            }
        }
        Interlocked.Increment(ref _syncWaiters);
        bool counted = true;
        try
        {
            bool leading = false;
            Interlocked.Increment(ref _leaderCandidates);
            try
            {
                long until = Stopwatch.GetTimestamp() + _replySpinTicks;
                var spinner = new SpinWait();
                while (!call.WaitOver)
                {
                    if (TryTakeReader(ReaderCaller))
                    {
                        leading = true;
                        break;
                    }
                    if (Stopwatch.GetTimestamp() >= until)
                    {
                        break;
                    }
                    spinner.SpinOnce(sleep1Threshold: -1);
                }
            }
            finally
            {
                Interlocked.Decrement(ref _leaderCandidates);
            }
            // Last look before sleeping, after leaving the candidates: a leader that released the socket
            // while still counting this caller as a candidate did not wake the receive thread, so the
            // socket is free now and this caller must read.
            if (!leading && !call.WaitOver && TryTakeReader(ReaderCaller))
            {
                leading = true;
            }
            if (leading)
            {
                return LeadUntil(call, deadline, ref counted);
            }
            return call.WaitOver || SleepUntilReply(call, deadline);
        }
        finally
        {
            if (counted)
            {
                Interlocked.Decrement(ref _syncWaiters);
            }
        }
    }

    private bool SpinThenWait(IReplyWait call, long deadline)
    {
        if (_replySpinTicks > 0)
        {
            long until = Stopwatch.GetTimestamp() + _replySpinTicks;
            var spinner = new SpinWait();
            do
            {
                spinner.SpinOnce(sleep1Threshold: -1);
                if (call.WaitOver)
                {
                    return true;
                }
            }
            while (Stopwatch.GetTimestamp() < until);
        }
        return SleepUntilReply(call, deadline);
    }

    /// <summary>
    /// <see cref="IReplyWait.Wait"/> in slices of <see cref="SleepSliceMs"/>: a wake-up lost between the
    /// completer and the sleeper (the runtime publishes its state and reads the sleeper flag, and the sleeper
    /// the reverse, with no full fence between store and load) then costs one slice, not the whole call.
    /// </summary>
    private bool SleepUntilReply(IReplyWait call, long deadline)
    {
        while (true)
        {
            TakeFlushFromPool(); // a flusher may have handed this thread's frame to the pool after its commit
            long slice = Environment.TickCount64 + SleepSliceMs;
            if (call.Wait(Math.Min(slice, deadline)))
            {
                return true;
            }
            if (call.WaitOver)
            {
                Interlocked.Increment(ref s_lostWakeups);
                return true;
            }
            if (deadline != long.MaxValue && Environment.TickCount64 >= deadline)
            {
                return call.WaitOver;
            }
        }
    }

    public override void Dispose()
    {
        if (IsClosed)
        {
            return;
        }
        // The peer answers the goodbye by closing, which can reach the receive thread before this thread
        // closes: that end of stream is this side's own orderly close, not a lost connection.
        Volatile.Write(ref _disposing, 1);
        TrySendGoodbye();
        Close(null);
    }

    /// <summary>
    /// Closes the channel for <paramref name="reason"/> (null: orderly); only the first close counts. The bytes
    /// already handed to the socket still reach a peer that takes them within <see cref="CloseLingerMs"/>
    /// (<see cref="TcpLink.CloseAfterSent"/>), unless <paramref name="peerLost"/> says nobody takes them.
    /// </summary>
    internal void Close(Exception? reason, bool peerLost = false)
    {
        if (Interlocked.CompareExchange(ref _closed, 1, 0) != 0)
        {
            return;
        }
        _closeReason = reason;
        StopHeartbeat();
        _link.CloseAfterSent(peerLost ? 0 : CloseLingerMs);
        lock (_sendLock)
        {
            // Senders waiting for room see the channel closed.
            Monitor.PulseAll(_sendLock);
        }
        lock (_readerGate)
        {
            // A parked receive thread sees it too, and ends.
            Monitor.PulseAll(_readerGate);
        }
        DeliverClosed();
    }

    /// <summary>
    /// How long a closed channel's socket waits for the peer to take the bytes already sent: the heartbeat timeout,
    /// after which a silent peer counts as lost anyway, or 10 s without heartbeats.
    /// </summary>
    private int CloseLingerMs => _options.HeartbeatTimeout == Timeout.InfiniteTimeSpan ? 10_000 : (int)Math.Min(int.MaxValue, (long)_options.HeartbeatTimeout.TotalMilliseconds);

    private void DeliverClosed()
    {
        IFrameHandler? handler = Volatile.Read(ref _handler);
        if (handler is not null && Interlocked.Exchange(ref _closeDelivered, 1) == 0)
        {
            handler.OnClosed(_closeReason);
        }
    }

    private XCallDisconnectedException ClosedError() =>
        new(_endpoint, _closeReason?.Message ?? "the channel is closed", _closeReason);
}
