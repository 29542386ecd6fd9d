using System.Diagnostics;

namespace XCall.Transport.Shm;

// Design: the send side's mutual exclusion, held from BeginFrame to Commit/Abort, cheaper than Lock on the path every
// frame takes (one compare-exchange to enter, one release store to exit, one read of the managed thread id).
// - _state is 1 while held, 0 when free; only a compare-exchange 0 -> 1 takes it, only the holder sets it back to 0.
// - _owner is the holder's managed thread id, written by the holder after it took _state and cleared before it lets
//   go, so a thread that reads its own id there holds the lock (no other thread writes that id, and its own clear
//   precedes its release in program order). That is how a nested BeginFrame on the holding thread is told from
//   contention (it throws instead of waiting for itself) and how Commit checks it runs where BeginFrame did.
// - Not re-entrant: TryEnterSlow returns Reentered to the holder instead of waiting.
// - Waiting: a contended Enter spins briefly, then counts itself in _waiters (an interlocked add, a full fence) and
//   blocks on _gate while _state is held. Exit, after its release store, pulses _gate when it reads a waiter. Its read
//   of _waiters may pass its own store to _state (store-to-load reordering), so Exit may miss a waiter that then reads
//   the lock still held: a blocked waiter therefore never sleeps longer than MaxBlockMs before it looks again, and it
//   polls the state between registering and blocking, by which time the store has drained. The pulse is issued under
//   _gate, whose lock (an interlocked operation) makes the release visible first, and a waiter checks _state under
//   _gate before Monitor.Wait, so a waiter seen by Exit is never left asleep.
internal sealed class SendLock
{
    /// <summary>What <see cref="TryEnter(int)"/> found.</summary>
    public enum Outcome
    {
        /// <summary>The lock is now held by the calling thread.</summary>
        Entered,

        /// <summary>The timeout passed while another thread held the lock.</summary>
        TimedOut,

        /// <summary>The calling thread held the lock already (nothing changed).</summary>
        Reentered,
    }

    private const int MaxBlockMs = 10;
    private const int SpinsBeforeBlocking = 40;

    private readonly object _gate = new();
    private int _state;
    private int _owner;
    private int _waiters;

    /// <summary>True when the calling thread holds the lock.</summary>
    public bool IsHeldByCurrentThread => Volatile.Read(ref _owner) == Environment.CurrentManagedThreadId;

    /// <summary>Takes the lock, waiting as long as it takes; <see cref="Outcome.Reentered"/> when this thread holds it already.</summary>
    public Outcome Enter()
    {
        if (Interlocked.CompareExchange(ref _state, 1, 0) == 0)
        {
            _owner = Environment.CurrentManagedThreadId;
            return Outcome.Entered;
        }
        return TryEnterSlow(Timeout.Infinite);
    }

    /// <summary>Takes the lock within <paramref name="timeoutMs"/> ms (0: only if free now; <see cref="Timeout.Infinite"/>: no bound).</summary>
    public Outcome TryEnter(int timeoutMs)
    {
        if (Interlocked.CompareExchange(ref _state, 1, 0) == 0)
        {
            _owner = Environment.CurrentManagedThreadId;
            return Outcome.Entered;
        }
        return TryEnterSlow(timeoutMs);
    }

    /// <summary>Lets the lock go; only its holder calls this.</summary>
    public void Exit()
    {
        Debug.Assert(IsHeldByCurrentThread, "SendLock.Exit by a thread that does not hold it");
        _owner = 0;
        Volatile.Write(ref _state, 0);
        if (Volatile.Read(ref _waiters) != 0)
        {
            WakeOne();
        }
    }

    private void WakeOne()
    {
        lock (_gate)
        {
            Monitor.Pulse(_gate);
        }
    }

    private Outcome TryEnterSlow(int timeoutMs)
    {
        int me = Environment.CurrentManagedThreadId;
        if (Volatile.Read(ref _owner) == me)
        {
            return Outcome.Reentered;
        }
        if (timeoutMs == 0)
        {
            return Outcome.TimedOut;
        }
        long deadline = timeoutMs == Timeout.Infinite ? long.MaxValue : Environment.TickCount64 + timeoutMs;
        var spinner = new SpinWait();
        for (int i = 0; i < SpinsBeforeBlocking; i++)
        {
            if (Volatile.Read(ref _state) == 0 && Interlocked.CompareExchange(ref _state, 1, 0) == 0)
            {
                _owner = me;
                return Outcome.Entered;
            }
            spinner.SpinOnce(sleep1Threshold: -1);
        }
        Interlocked.Increment(ref _waiters);
        try
        {
            while (true)
            {
                for (int i = 0; i < SpinsBeforeBlocking; i++)
                {
                    if (Volatile.Read(ref _state) == 0 && Interlocked.CompareExchange(ref _state, 1, 0) == 0)
                    {
                        _owner = me;
                        return Outcome.Entered;
                    }
                    Thread.SpinWait(8);
                }
                long remaining = deadline - Environment.TickCount64;
                if (remaining <= 0)
                {
                    return Outcome.TimedOut;
                }
                lock (_gate)
                {
                    if (Volatile.Read(ref _state) != 0)
                    {
                        Monitor.Wait(_gate, (int)Math.Min(remaining, MaxBlockMs));
                    }
                }
            }
        }
        finally
        {
            Interlocked.Decrement(ref _waiters);
        }
    }
}
