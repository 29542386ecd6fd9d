using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace XCall.Transport;

/// <summary>
/// For transports: the bookkeeping of a channel's detached frames (<see cref="FrameChannel.DetachFrame"/>). Which
/// receive thread runs the work of a detached frame, whether it still holds the channel's receiving, and the
/// hand-over when the work takes long: a process-wide watch thread looks every 1-4 ms at channels that
/// detach frames, and calls the channel's hand-over when the same work is still running on two looks in a row.
/// </summary>
/// <remarks>
/// Design: the receive thread marks a run in _stealable (its managed thread id; _runSeq counts the runs: each Mark, and
/// each frame a run takes itself).
/// Whoever takes _stealable from that id to 0 owns the channel's receiving: the receive thread when the work returns
/// (<see cref="End"/>) or when it waits for a reply from inside it (<see cref="Pause"/>, then <see cref="Resume"/>
/// marks the run again), or the watch, which then calls the hand-over (the channel gives its receiving to a new
/// thread). A thread that finds the mark gone at <see cref="End"/> lost the receiving: it leaves without touching the
/// channel's receive state.
///
/// The receive thread changes the mark on every call it runs this way, and the watch looks every 1-4 ms and
/// steals rarely, so the two sides pay unequally (an asymmetric Dekker pair): the receive thread changes the mark
/// with plain stores inside a window announced in its own Runner's InTransition word (store the word, then load
/// _stealing: no fence); the watch, to steal, stores _stealing, issues a process-wide barrier
/// (<see cref="Interlocked.MemoryBarrierProcessWide"/>: every thread of the process passes a full fence) and then
/// reads the runner's InTransition. Either the watch sees the window open (it backs off until a later look) or
/// the receive thread sees _stealing set and changes the mark with interlocked operations, which the watch's
/// compare-exchange then orders. A window's stores are visible to the watch once it passed the barrier and found
/// no window open, so it re-reads the mark and the run count there and steals only if neither moved. Each thread
/// has its own Runner: a thread whose receiving was handed over may still close a window (at <see cref="End"/>)
/// while the new receive thread opens one, and neither must clear the other's word. _runner (the Runner of the
/// thread that marked last) is written before the mark, so a watch that read a mark reads its Runner.
///
/// A run of one-way calls takes each next frame itself (<see cref="BeginTake"/> to <see cref="EndTake"/>): the mark
/// stays, the window stays open over the take (the watch backs off as above), and EndTake bumps _runSeq inside it
/// before closing it, so each call is a run of its own for the watch. Only the take runs inside that window: anything
/// that opens or closes a window of its own (Mark, Unmark, another take) would close it early. When BeginTake finds
/// the watch checking for a steal (_stealing set), it closes its window and pauses the run (Unmark, as Pause does), and
/// EndTake marks the run again (Mark, as Resume does).
///
/// The depth of detached runs is per thread (a thread is the receive thread of one channel at a time). _watched
/// and the watch's list change under the watch's lock; a run marks itself and then reads _watched, the watch
/// clears _watched, issues the process-wide barrier and then reads the mark (a Dekker pair, asymmetric as above),
/// so a run never goes unwatched.
///
/// A run stuck on two looks is not taken when its thread waits for a core rather than for its work (where the kernel
/// tells, see <see cref="WaitsForACore"/>), for up to 20 ms: on busy cores a receive thread preempted in the middle
/// of a short call would otherwise be replaced by a new thread, which waits for a core as well, about once a second.
/// </remarks>
public sealed class DetachedFrames
{
    /// <summary>The most threads a channel lets run work of detached frames after handing its receiving over; at
    /// this many it stops detaching until one returns.</summary>
    public const int MaxHandedOff = 16;

    private const int IdleTicks = 64; // looks without a run before the watch lets go of the channel
    private const long LongWorkNs = 2_000_000; // CPU time a stuck run's thread uses after which its work is long, however little of a core it gets
    private const long StuckBoundNs = 20_000_000; // a run stuck this long is handed over even if its thread only waits for a core (another may be idle)

    [ThreadStatic]
    private static Runner? t_runner;

    private readonly Action _handOver;
    private readonly Func<bool> _isStopping;
    private readonly Func<int, long> _cpuTime;
    private readonly Func<int, bool?> _isRunnable;
    private readonly long _stuckBoundNs;
    private int _stealable;
    private long _runSeq;
    private Runner? _runner;
    private int _stealing; // the watch's: 1 while it checks for a steal and makes it
    private int _handedOff;
    private int _handOvers;
    private int _watched;
    private long _watchSeq; // the watch's thread only
    private int _watchIdle; // the watch's thread only
    private long _stuckSeq; // the watch's thread only: the run count of the run the looks last found stuck
    private long _stuckSince; // the watch's thread only: when they first did (Stopwatch timestamp)
    private long _runCpuNs; // the watch's thread only: its thread's CPU time then
    private long _lookCpuNs; // the watch's thread only: its CPU time at the last stuck look
    private long _lookTime; // the watch's thread only: when (Stopwatch timestamp)

    /// <summary>
    /// Bookkeeping for one channel: <paramref name="handOver"/> (called on the watch's thread, never concurrently for
    /// one channel) gives the channel's receiving to a new thread; <paramref name="isStopping"/> says the channel
    /// closes (a run is then handed over at the next look, so the close can finish).
    /// </summary>
    public DetachedFrames(Action handOver, Func<bool> isStopping)
        : this(handOver, isStopping, OsThreads.CpuTime, OsThreads.IsRunnable)
    {
    }

    /// <summary>Tests: what the kernel says of a thread (by kernel id) comes from <paramref name="cpuTime"/> (ns, -1:
    /// unknown) and <paramref name="isRunnable"/> (null: unknown); a stuck run is handed over after
    /// <paramref name="stuckBoundNs"/> at the latest.</summary>
    internal DetachedFrames(Action handOver, Func<bool> isStopping, Func<int, long> cpuTime, Func<int, bool?> isRunnable, long stuckBoundNs = StuckBoundNs)
    {
        _handOver = handOver;
        _isStopping = isStopping;
        _cpuTime = cpuTime;
        _isRunnable = isRunnable;
        _stuckBoundNs = stuckBoundNs;
    }

    private static Runner Me
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => t_runner ?? NewRunner();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Runner NewRunner() => t_runner = new Runner(Environment.CurrentManagedThreadId);

    /// <summary>False while this thread runs a detached frame's work, or <see cref="MaxHandedOff"/> threads run work handed over.</summary>
    public bool MayDetach => (t_runner is not { } runner || runner.Depth == 0) && Volatile.Read(ref _handedOff) < MaxHandedOff;

    /// <summary>True when this thread runs a detached frame's work of this channel and holds its receiving.</summary>
    public bool RunsHere => t_runner is { Depth: not 0 } runner && Volatile.Read(ref _stealable) == runner.Id;

    /// <summary>The watch's: its last look (<see cref="Tick"/>) found a run going, which the next look, a millisecond
    /// later, finds moved on or stuck.</summary>
    internal bool RunSeen { get; private set; }

    /// <summary>How many times the receiving was handed to a new thread (tests, diagnostics).</summary>
    public int HandOvers => Volatile.Read(ref _handOvers);

    /// <summary>The receive thread begins a detached frame's work.</summary>
    public void Begin()
    {
        Runner me = Me;
        me.Depth++;
        Mark(me);
    }

    /// <summary>The work returned: true when this thread still holds the receiving, false when it was handed over.</summary>
    public bool End()
    {
        Runner me = Me;
        me.Depth--;
        if (Unmark(me))
        {
            return true;
        }
        Interlocked.Decrement(ref _handedOff);
        return false;
    }

    /// <summary>The work waits for a reply and receives itself: true when this thread still holds the receiving (then
    /// call <see cref="Resume"/> after receiving), false when it was handed over.</summary>
    public bool Pause() => Unmark(Me);

    /// <summary>After <see cref="Pause"/>: the work goes on (the watch counts it as a new run, and watches the channel
    /// again if it let go of it during a long pause).</summary>
    public void Resume() => Mark(Me);

    /// <summary>
    /// The work takes the run's next frame itself (a run of one-way calls, each a run of its own for the watch): true when
    /// this thread still holds the receiving; then the watch does not take it until <see cref="EndTake"/>, which must
    /// follow on the same thread. The mark stays and the window announced in the thread's Runner stays open over the
    /// take, so the watch backs off meanwhile (see the design notes); only the take itself may run until EndTake, no
    /// other member of this class. While the watch is checking for a steal, the mark is taken away and put back, as
    /// <see cref="Pause"/> and <see cref="Resume"/> do.
    /// </summary>
    public bool BeginTake()
    {
        Runner me = Me;
        Debug.Assert(me.InTransition == 0, "a take inside another window");
        Volatile.Write(ref me.InTransition, 1);
        if (Volatile.Read(ref _stealing) == 0)
        {
            if (Volatile.Read(ref _stealable) == me.Id)
            {
                return true; // the window stays open until EndTake
            }
            Volatile.Write(ref me.InTransition, 0);
            return false;
        }
        // The watch is checking for a steal: the take pauses the run instead (EndTake resumes it).
        Volatile.Write(ref me.InTransition, 0);
        if (!Unmark(me))
        {
            return false;
        }
        me.TakeUnmarked = true;
        return true;
    }

    /// <summary>After <see cref="BeginTake"/> returned true: the next call is a new run, and the watch may look at it.</summary>
    public void EndTake()
    {
        // The Runner that marked last is this thread's: it holds the mark (or took it away itself), so no steal and no
        // other thread's mark came in between.
        Runner me = _runner!;
        if (me.TakeUnmarked)
        {
            me.TakeUnmarked = false;
            Mark(me);
            return;
        }
        Volatile.Write(ref _runSeq, _runSeq + 1);
        Volatile.Write(ref me.InTransition, 0);
    }

    /// <summary>Marks a run of <paramref name="me"/>'s (it holds the receiving).</summary>
    private void Mark(Runner me)
    {
        Debug.Assert(me.InTransition == 0, "a mark changed inside a take");
        Volatile.Write(ref me.InTransition, 1);
        if (Volatile.Read(ref _stealing) == 0)
        {
            if (!ReferenceEquals(_runner, me))
            {
                Volatile.Write(ref _runner, me);
            }
            Volatile.Write(ref _runSeq, _runSeq + 1);
            Volatile.Write(ref _stealable, me.Id);
            Volatile.Write(ref me.InTransition, 0);
        }
        else
        {
            Volatile.Write(ref me.InTransition, 0);
            Volatile.Write(ref _runner, me);
            Volatile.Write(ref _runSeq, _runSeq + 1);
            Interlocked.Exchange(ref _stealable, me.Id);
        }
        if (Volatile.Read(ref _watched) == 0)
        {
            DetachWatch.Track(this);
        }
    }

    /// <summary>Takes <paramref name="me"/>'s mark away: true when it was still there (nobody stole the run).</summary>
    private bool Unmark(Runner me)
    {
        Debug.Assert(me.InTransition == 0, "a mark changed inside a take");
        Volatile.Write(ref me.InTransition, 1);
        if (Volatile.Read(ref _stealing) == 0)
        {
            bool mine = Volatile.Read(ref _stealable) == me.Id;
            if (mine)
            {
                Volatile.Write(ref _stealable, 0);
            }
            Volatile.Write(ref me.InTransition, 0);
            return mine;
        }
        Volatile.Write(ref me.InTransition, 0);
        return Interlocked.CompareExchange(ref _stealable, 0, me.Id) == me.Id;
    }

    /// <summary>The watch takes the run of thread <paramref name="runner"/>, seen at run count <paramref name="seq"/>
    /// on two looks, unless that thread is changing its mark or the run moved meanwhile.</summary>
    private bool TrySteal(int runner, long seq)
    {
        Volatile.Write(ref _stealing, 1);
        try
        {
            Interlocked.MemoryBarrierProcessWide();
            return Volatile.Read(ref _stealable) == runner
                && Volatile.Read(ref _runner) is { } owner && owner.Id == runner && Volatile.Read(ref owner.InTransition) == 0
                && Volatile.Read(ref _runSeq) == seq
                && Interlocked.CompareExchange(ref _stealable, 0, runner) == runner;
        }
        finally
        {
            Volatile.Write(ref _stealing, 0);
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
        RunSeen = runner != 0;
        bool stopping = _isStopping();
        bool moved = seq != _watchSeq;
        _watchSeq = seq;
        if (runner != 0 && (!moved || stopping) && (stopping || !WaitsForACore(runner, seq)) && TrySteal(runner, seq))
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
        Interlocked.MemoryBarrierProcessWide(); // a run marked with plain stores is seen now, or it sees _watched cleared
        if (Volatile.Read(ref _stealable) == 0 && Volatile.Read(ref _runSeq) == seq)
        {
            return false;
        }
        Volatile.Write(ref _watched, 1);
        _watchIdle = 0;
        return true;
    }

    /// <summary>
    /// For run <paramref name="runner"/> (count <paramref name="seq"/>), stuck since the last look: true when its thread
    /// waits for a core rather than for its work. At the run's first stuck look, true when the thread is runnable (its
    /// CPU time is noted); at each later one, true while it is still runnable and yet ran at most half the time since
    /// the look before, less than <see cref="LongWorkNs"/> since the first stuck look, and the run has been stuck for
    /// less than <see cref="StuckBoundNs"/> (20 ms): it was preempted, and its work may be short. False (hand over) when the
    /// thread sleeps or waits on something (its work blocks), ran (its work is long), or the kernel cannot tell. Only
    /// stuck looks ask the kernel, so a look at a moving run costs nothing more.
    /// </summary>
    private bool WaitsForACore(int runner, long seq)
    {
        Runner? owner = Volatile.Read(ref _runner);
        int tid = owner is not null && owner.Id == runner ? owner.OsThreadId : 0;
        if (tid == 0)
        {
            return false;
        }
        try
        {
            bool first = seq != _stuckSeq;
            if (first && _isRunnable(tid) != true)
            {
                return false;
            }
            long cpuNs = _cpuTime(tid);
            long now = System.Diagnostics.Stopwatch.GetTimestamp(); // beside the CPU clock: the /proc read above is in neither interval
            if (cpuNs < 0)
            {
                return false;
            }
            if (first)
            {
                _stuckSeq = seq;
                _stuckSince = now;
                _runCpuNs = cpuNs;
                _lookCpuNs = cpuNs;
                _lookTime = now;
                return true;
            }
            long ranNs = cpuNs - _lookCpuNs;
            long betweenNs = (long)System.Diagnostics.Stopwatch.GetElapsedTime(_lookTime, now).TotalNanoseconds;
            _lookCpuNs = cpuNs;
            _lookTime = now;
            return ranNs * 2 <= betweenNs
                && cpuNs - _runCpuNs < LongWorkNs
                && System.Diagnostics.Stopwatch.GetElapsedTime(_stuckSince, now).TotalNanoseconds < _stuckBoundNs
                && _isRunnable(tid) == true;
        }
        catch (Exception)
        {
            return false; // a probe that fails tells nothing: the run is handed over as if the kernel could not tell
        }
    }

    /// <summary>A thread that runs detached frames' work: its depth of runs, and the word that announces its changes
    /// of a channel's mark (see the design notes).</summary>
    private sealed class Runner(int id)
    {
        public readonly int Id = id;
        public readonly int OsThreadId = OsThreads.CurrentId(); // made on its own thread (see Me)
        public int Depth;
        public int InTransition;
        public bool TakeUnmarked; // between BeginTake and EndTake: the mark was taken away (the watch was checking)
    }
}
