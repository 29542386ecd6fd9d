namespace XCall.Transport.Shm;

// Design: detached frames (FrameChannel.DetachFrame). Only the receive thread, polling in its own loop (not
// inside another detached frame: t_detachDepth), detaches, and only a frame of one record: RingReader.Detach
// releases it before the handler's work runs. The receive thread keeps the receiver role meanwhile and marks the
// run in _stealable (its thread id, written with an interlocked exchange; _runSeq counts runs). Whoever swaps
// _stealable from that id to 0 owns the role:
// - the receive thread, when the work returns (ReceiveLoop) or when it waits for a reply from inside it
//   (WaitDetached: it polls re-entrantly, then marks the run again before the work goes on);
// - ReceiveWatch, which looks at the channel about once a millisecond while it detaches frames: a run it finds
//   marked on two looks in a row (the same _runSeq), or on a stopping channel, is taken over: a new receive
//   thread gets the role directly (_roleOwner is written for it; nobody else can take a role that is not free)
//   and becomes _receiveThread. The old thread finds _stealable changed when its work returns and leaves the
//   loop without touching the ring (its frame was released) or finishing the close (the new thread does).
// So a detached frame whose work blocks, or waits for a frame only this connection brings, holds the channel up
// for about one to two milliseconds. _handedOff counts old threads still running; at MaxHandedOff the channel
// stops detaching (the connection then queues its calls as it does for frames it may not detach).
internal sealed partial class ShmChannel
{
    private const int MaxHandedOff = 16;
    private const int WatchIdleTicks = 64; // looks without a detached frame before the watch lets go of the channel

    // Detached frames this thread runs as a receive thread (of any channel; only one channel's at depth 0).
    [ThreadStatic]
    private static int t_detachDepth;

    private int _stealable;
    private long _runSeq;
    private int _handedOff;
    private int _watched; // 1 while ReceiveWatch looks at this channel (written under its lock, or 0 by the watch)
    private long _watchSeq; // ReceiveWatch's thread only
    private int _watchIdleTicks; // ReceiveWatch's thread only

    /// <summary>Tests: how many times the receiving was handed to a new thread because a detached frame's work took long.</summary>
    internal int HandOvers => Volatile.Read(ref _handOvers);

    private int _handOvers;

    /// <inheritdoc/>
    public override bool CanDetachFrame =>
        t_detachDepth == 0
        && Environment.CurrentManagedThreadId == _receiveThreadId
        && _reader.CanDetach
        && Volatile.Read(ref _stopping) == 0
        && Volatile.Read(ref _handedOff) < MaxHandedOff;

    /// <inheritdoc/>
    public override void DetachFrame()
    {
        if (!CanDetachFrame)
        {
            throw new NotSupportedException("Only the receive thread detaches a frame, from the frame's handler, outside another detached frame.");
        }
        _reader.Detach();
        t_detachDepth++;
        Volatile.Write(ref _runSeq, _runSeq + 1);
        Interlocked.Exchange(ref _stealable, Environment.CurrentManagedThreadId);
        if (Volatile.Read(ref _watched) == 0)
        {
            ReceiveWatch.Track(this);
        }
    }

    /// <summary>The receive thread's detached frame returned: true when it still holds the role.</summary>
    private bool EndDetached(int me)
    {
        t_detachDepth--;
        if (Interlocked.CompareExchange(ref _stealable, 0, me) == me)
        {
            return true;
        }
        Interlocked.Decrement(ref _handedOff);
        return false;
    }

    /// <summary>True when this thread runs a detached frame of this channel and may poll for a reply itself.</summary>
    private bool RunsDetached => t_detachDepth != 0 && Volatile.Read(ref _stealable) == Environment.CurrentManagedThreadId;

    /// <summary>
    /// The receive thread, inside a detached frame's work, waits for a reply: it polls the ring itself (it holds the
    /// role), so the reply (or a call nested in its call) needs no other thread; frames that are not for it are
    /// handled as any caller's poll handles them.
    /// </summary>
    private bool WaitDetached(IReplyWait call, long deadline)
    {
        int me = Environment.CurrentManagedThreadId;
        IFrameHandler? handler = Volatile.Read(ref _handler);
        if (handler is null || Interlocked.CompareExchange(ref _stealable, 0, me) != me)
        {
            return call.Wait(deadline); // handed over meanwhile: the new receive thread reads the reply
        }
        PumpOutcome outcome;
        try
        {
            outcome = Pump(call, deadline, handler, maySleep: true);
        }
        finally
        {
            Volatile.Write(ref _runSeq, _runSeq + 1);
            Interlocked.Exchange(ref _stealable, me);
        }
        return outcome switch
        {
            PumpOutcome.Completed => true,
            PumpOutcome.TimedOut => call.IsCompleted,
            _ => call.Wait(deadline), // the watch hands the receiving over
        };
    }

    /// <summary>ReceiveWatch's look at the channel; false when it needs no more looks.</summary>
    internal bool WatchTick()
    {
        int runner = Volatile.Read(ref _stealable);
        long seq = Volatile.Read(ref _runSeq);
        bool stopping = Volatile.Read(ref _stopping) != 0;
        bool moved = seq != _watchSeq;
        bool stuck = runner != 0 && (!moved || stopping);
        _watchSeq = seq;
        if (stuck && Interlocked.CompareExchange(ref _stealable, 0, runner) == runner)
        {
            HandOver();
            _watchIdleTicks = 0;
            return true;
        }
        if (runner != 0 || (moved && !stopping))
        {
            _watchIdleTicks = 0;
            return true;
        }
        if (!stopping && ++_watchIdleTicks < WatchIdleTicks)
        {
            return true;
        }
        // Let go, unless a run began meanwhile (Dekker with DetachFrame: it marks the run, then reads _watched).
        Interlocked.Exchange(ref _watched, 0);
        if (Volatile.Read(ref _stealable) == 0 && Volatile.Read(ref _runSeq) == seq)
        {
            return false;
        }
        Volatile.Write(ref _watched, 1);
        _watchIdleTicks = 0;
        return true;
    }

    /// <summary>Called by ReceiveWatch under its lock.</summary>
    internal bool Watched
    {
        get => Volatile.Read(ref _watched) != 0;
        set => Volatile.Write(ref _watched, value ? 1 : 0);
    }

    /// <summary>The watch took the role from a receive thread stuck in a detached frame: a new receive thread gets it.</summary>
    private void HandOver()
    {
        Interlocked.Increment(ref _handedOff);
        Interlocked.Increment(ref _handOvers);
        lock (_stateLock)
        {
            var thread = new Thread(() => ReceiveLoop(holdsRole: true)) { IsBackground = true, Name = $"xcall {_endpoint} receive" };
            _receiveThreadId = thread.ManagedThreadId;
            _receiveThread = thread;
            Volatile.Write(ref _roleOwner, thread.ManagedThreadId);
            thread.Start();
        }
    }
}
