namespace XCall.Transport;

/// <summary>
/// For transports: the bookkeeping of a channel's detached frames (<see cref="FrameChannel.DetachFrame"/>). Which
/// receive thread runs the work of a detached frame, whether it still holds the channel's receiving, and the
/// hand-over when the work takes long: a process-wide watch thread looks about once a millisecond at channels that
/// detach frames, and calls the channel's hand-over when the same work is still running on two looks in a row.
/// </summary>
/// <remarks>
/// Design: the receive thread marks a run in _stealable (its managed thread id, written with an interlocked
/// exchange; _runSeq counts runs and pauses). Whoever swaps _stealable from that id to 0 owns the channel's
/// receiving: the receive thread when the work returns (<see cref="End"/>) or when it waits for a reply from inside
/// it (<see cref="Pause"/>, then <see cref="Resume"/> marks the run again), or the watch, which then calls the
/// hand-over (the channel gives its receiving to a new thread). A thread that finds the mark gone at
/// <see cref="End"/> lost the receiving: it leaves without touching the channel's receive state. The depth of
/// detached runs is per thread (a thread is the receive thread of one channel at a time). _watched and the
/// watch's list change under the watch's lock; a run marks itself and then reads _watched, the watch clears
/// _watched and then reads the mark (a Dekker pair), so a run never goes unwatched.
/// </remarks>
public sealed class DetachedFrames
{
    /// <summary>The most threads a channel lets run work of detached frames after handing its receiving over; at
    /// this many it stops detaching until one returns.</summary>
    public const int MaxHandedOff = 16;

    private const int IdleTicks = 64; // looks without a run before the watch lets go of the channel

    [ThreadStatic]
    private static int t_depth;

    private readonly Action _handOver;
    private readonly Func<bool> _isStopping;
    private int _stealable;
    private long _runSeq;
    private int _handedOff;
    private int _handOvers;
    private int _watched;
    private long _watchSeq; // the watch's thread only
    private int _watchIdle; // the watch's thread only

    /// <summary>
    /// Bookkeeping for one channel: <paramref name="handOver"/> (called on the watch's thread, never concurrently for
    /// one channel) gives the channel's receiving to a new thread; <paramref name="isStopping"/> says the channel
    /// closes (a run is then handed over at the next look, so the close can finish).
    /// </summary>
    public DetachedFrames(Action handOver, Func<bool> isStopping)
    {
        _handOver = handOver;
        _isStopping = isStopping;
    }

    /// <summary>False while this thread runs a detached frame's work, or <see cref="MaxHandedOff"/> threads run work handed over.</summary>
    public bool MayDetach => t_depth == 0 && Volatile.Read(ref _handedOff) < MaxHandedOff;

    /// <summary>True when this thread runs a detached frame's work of this channel and holds its receiving.</summary>
    public bool RunsHere => t_depth != 0 && Volatile.Read(ref _stealable) == Environment.CurrentManagedThreadId;

    /// <summary>How many times the receiving was handed to a new thread (tests, diagnostics).</summary>
    public int HandOvers => Volatile.Read(ref _handOvers);

    /// <summary>The receive thread begins a detached frame's work.</summary>
    public void Begin()
    {
        t_depth++;
        Volatile.Write(ref _runSeq, _runSeq + 1);
        Interlocked.Exchange(ref _stealable, Environment.CurrentManagedThreadId);
        if (Volatile.Read(ref _watched) == 0)
        {
            DetachWatch.Track(this);
        }
    }

    /// <summary>The work returned: true when this thread still holds the receiving, false when it was handed over.</summary>
    public bool End()
    {
        t_depth--;
        if (Interlocked.CompareExchange(ref _stealable, 0, Environment.CurrentManagedThreadId) == Environment.CurrentManagedThreadId)
        {
            return true;
        }
        Interlocked.Decrement(ref _handedOff);
        return false;
    }

    /// <summary>The work waits for a reply and receives itself: true when this thread still holds the receiving (then
    /// call <see cref="Resume"/> after receiving), false when it was handed over.</summary>
    public bool Pause() => Interlocked.CompareExchange(ref _stealable, 0, Environment.CurrentManagedThreadId) == Environment.CurrentManagedThreadId;

    /// <summary>After <see cref="Pause"/>: the work goes on (the watch counts it as a new run, and watches the channel
    /// again if it let go of it during a long pause).</summary>
    public void Resume()
    {
        Volatile.Write(ref _runSeq, _runSeq + 1);
        Interlocked.Exchange(ref _stealable, Environment.CurrentManagedThreadId);
        if (Volatile.Read(ref _watched) == 0)
        {
            DetachWatch.Track(this);
        }
    }

    internal bool Watched
    {
        get => Volatile.Read(ref _watched) != 0;
        set => Volatile.Write(ref _watched, value ? 1 : 0);
    }

    /// <summary>The watch's look; false when the channel needs no more looks.</summary>
    internal bool Tick()
    {
        int runner = Volatile.Read(ref _stealable);
        long seq = Volatile.Read(ref _runSeq);
        bool stopping = _isStopping();
        bool moved = seq != _watchSeq;
        _watchSeq = seq;
        if (runner != 0 && (!moved || stopping) && Interlocked.CompareExchange(ref _stealable, 0, runner) == runner)
        {
            Interlocked.Increment(ref _handedOff);
            Interlocked.Increment(ref _handOvers);
            _handOver();
            _watchIdle = 0;
            return true;
        }
        if (runner != 0 || moved)
        {
            _watchIdle = 0; // a run goes on (it paused or ended and began again between the reads), or runs came and went
            return true;
        }
        if (!stopping && ++_watchIdle < IdleTicks)
        {
            return true;
        }
        Interlocked.Exchange(ref _watched, 0);
        if (Volatile.Read(ref _stealable) == 0 && Volatile.Read(ref _runSeq) == seq)
        {
            return false;
        }
        Volatile.Write(ref _watched, 1);
        _watchIdle = 0;
        return true;
    }
}
