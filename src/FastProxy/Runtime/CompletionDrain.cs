using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>
/// Runs the continuations of a connection's async calls: the thread that completes a call (the one that read its
/// reply, a timeout, a cancellation, a close) pushes it here, and one thread-pool work item, a drainer, runs the
/// continuations of every call pushed while it runs, one after the other. So a burst of replies costs one pool
/// hand-off, not one per call, and no continuation (user code) ever runs on the thread that reads the frames.
/// Calls whose typed reply completes where the reply is read (<see cref="CompilerServices.AsyncReply.CompletesWhereReplied"/>)
/// never come here: their tasks run continuations asynchronously.
/// </summary>
/// <remarks>
/// A continuation that blocks would hold up the calls behind it, so a drainer hands the rest of its work to a new
/// drainer (<see cref="HandOff"/>) when its continuation makes a synchronous call or waits on a connection
/// (<see cref="BeforeBlockingWait"/>), and a watch that ticks while a drain is under way does the same for a
/// continuation that made no progress for a whole tick (a sleep, a lock, a task's result awaited synchronously).
/// </remarks>
// Design:
// - Completers push calls on _incoming, a stack linked through PendingCall.NextCompleted: one CAS per push. Nobody
//   pops single calls; a drainer takes the whole stack with one exchange (and turns it into FIFO order in _batch),
//   so a pooled call reused meanwhile cannot cause ABA.
// - _scheduled is 1 from the push that queued a drainer until a drainer finds _batch and _incoming empty. A push
//   CASes (full fence) and then reads _scheduled; a drainer exchanges _scheduled to 0 (full fence) and then reads
//   _incoming: a Dekker pair, so a pushed call always has a drainer coming.
// - One drainer at a time owns _batch and _scheduled's 1: the one queued by the push (or hand-off) that set it.
//   Each drainer run has its own epoch (> 0). Around a continuation the drainer stores its epoch in _running and
//   afterwards CASes it back to 0; if that fails, HandOff swapped it for HandedOff and passed the ownership on
//   (to a new drainer, or back to 0 in _scheduled when nothing was left), and this run stops without touching
//   _batch or _scheduled again. HandOff acts only on the epoch it names, so a hand-off asked by a continuation
//   of an earlier, replaced run (still blocked) never touches the current owner.
// - The watch (a timer) runs while _scheduled may be 1: a drainer starts it under _watchLock when it finds it
//   stopped; a tick stops it, also under _watchLock, only after clearing _watching and then (full fence) seeing
//   _scheduled at 0. A tick reads _running, _progress and the lists without a lock: a wrong guess only costs a
//   needless hand-off or a tick's delay.
internal sealed class CompletionDrain : IThreadPoolWorkItem
{
    private const long HandedOff = -1;
    private const int WatchPeriodMs = 10;

    [ThreadStatic]
    private static CompletionDrain? t_drain;

    [ThreadStatic]
    private static long t_epoch;

    private readonly object _watchLock = new();
    private PendingCall? _incoming;
    private PendingCall? _batch;
    private int _scheduled;
    private long _epoch;
    private long _running;
    private long _progress;
    private long _handOffs;
    private long _runs;
    private long _completed;
    private Timer? _watch;
    private int _watching;
    private long _watchedRunning;
    private long _watchedProgress;

    /// <summary>Tests: how many times a drainer handed its work to a new one.</summary>
    internal long HandOffs => Volatile.Read(ref _handOffs);

    /// <summary>Tests and the bench: how many drainer runs (thread-pool work items) ran.</summary>
    internal long Runs => Volatile.Read(ref _runs);

    /// <summary>Tests and the bench: how many continuations the drainers ran.</summary>
    internal long Completed => Volatile.Read(ref _completed);

    /// <summary>Queues <paramref name="call"/>'s continuation (its value-task source is completed by a drainer).</summary>
    public void Push(PendingCall call)
    {
        PendingCall? head = Volatile.Read(ref _incoming);
        while (true)
        {
            call.NextCompleted = head;
            PendingCall? seen = Interlocked.CompareExchange(ref _incoming, call, head);
            if (ReferenceEquals(seen, head))
            {
                break;
            }
            head = seen;
        }
        if (Volatile.Read(ref _scheduled) == 0 && Interlocked.Exchange(ref _scheduled, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
    }

    /// <summary>
    /// This thread is about to block on a call or a connection: if it runs a drainer's continuation, the calls
    /// behind that continuation go to a new drainer first.
    /// </summary>
    public static void BeforeBlockingWait()
    {
        if (t_drain is { } drain)
        {
            drain.HandOff(t_epoch);
        }
    }

    void IThreadPoolWorkItem.Execute()
    {
        long epoch = ++_epoch; // only the owner runs here (see Design)
        Volatile.Write(ref _runs, _runs + 1);
        CompletionDrain? outerDrain = t_drain;
        long outerEpoch = t_epoch;
        t_drain = this;
        t_epoch = epoch;
        try
        {
            if (Volatile.Read(ref _watching) == 0)
            {
                StartWatch();
            }
            while (true)
            {
                PendingCall? call = _batch ?? TakeIncoming();
                if (call is null)
                {
                    Interlocked.Exchange(ref _scheduled, 0);
                    if (Volatile.Read(ref _incoming) is null || Interlocked.Exchange(ref _scheduled, 1) != 0)
                    {
                        return;
                    }
                    continue;
                }
                _batch = call.NextCompleted;
                call.NextCompleted = null;
                Volatile.Write(ref _running, epoch);
                call.RunContinuation();
                if (Interlocked.CompareExchange(ref _running, 0, epoch) != epoch)
                {
                    return; // handed off while the continuation ran: the new owner has the rest
                }
                Volatile.Write(ref _progress, _progress + 1);
                Volatile.Write(ref _completed, _completed + 1);
            }
        }
        finally
        {
            t_drain = outerDrain;
            t_epoch = outerEpoch;
        }
    }

    /// <summary>The whole incoming stack, oldest first (linked through <see cref="PendingCall.NextCompleted"/>).</summary>
    private PendingCall? TakeIncoming()
    {
        PendingCall? ordered = null;
        for (PendingCall? call = Interlocked.Exchange(ref _incoming, null), newer; call is not null; call = newer)
        {
            (newer, call.NextCompleted, ordered) = (call.NextCompleted, ordered, call);
        }
        return ordered;
    }

    /// <summary>The drainer run <paramref name="epoch"/>, inside a continuation, passes what it owns on.</summary>
    private void HandOff(long epoch)
    {
        if (epoch <= 0 || Interlocked.CompareExchange(ref _running, HandedOff, epoch) != epoch)
        {
            return; // not in a continuation of the owning run (a replaced run, or between calls)
        }
        Interlocked.Increment(ref _handOffs);
        if (_batch is null)
        {
            // Nothing taken yet: give _scheduled back, so the next push queues a drainer.
            Interlocked.Exchange(ref _scheduled, 0);
            if (Volatile.Read(ref _incoming) is null || Interlocked.Exchange(ref _scheduled, 1) != 0)
            {
                return;
            }
        }
        ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
    }

    private void StartWatch()
    {
        lock (_watchLock)
        {
            if (_watching != 0)
            {
                return;
            }
            _watch ??= new Timer(static s => ((CompletionDrain)s!).Tick(), this, Timeout.Infinite, Timeout.Infinite);
            Volatile.Write(ref _watching, 1);
            _watch.Change(WatchPeriodMs, WatchPeriodMs);
        }
    }

    private void Tick()
    {
        long running = Volatile.Read(ref _running);
        long progress = Volatile.Read(ref _progress);
        bool stuck = running > 0 && running == _watchedRunning && progress == _watchedProgress;
        _watchedRunning = running;
        _watchedProgress = progress;
        if (stuck && (Volatile.Read(ref _batch) is not null || Volatile.Read(ref _incoming) is not null))
        {
            HandOff(running); // one continuation for a whole tick, with calls waiting behind it
            return;
        }
        if (Volatile.Read(ref _scheduled) != 0)
        {
            return;
        }
        lock (_watchLock)
        {
            Interlocked.Exchange(ref _watching, 0);
            if (Volatile.Read(ref _scheduled) != 0)
            {
                Volatile.Write(ref _watching, 1); // a drainer came meanwhile: keep watching
                return;
            }
            _watch!.Change(Timeout.Infinite, Timeout.Infinite);
        }
    }
}
