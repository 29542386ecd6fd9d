namespace XCall.Transport.Shm.Ring;

// Design: the spin budget one waiting site learns (a channel's callers polling for replies, or its receive
// thread), in CPU pauses, between Floor and Ceiling; it starts at Ceiling.
// - A wait that spun its whole budget and then slept (Exhausted) shrinks it by a quarter: spinning that rarely
//   succeeds stops costing a core.
// - Work found after n turns (Found) raises it to 2n when n passed half of it: the waits that do succeed keep
//   their margin.
// - A sleep that ended soon after it began (Woke, under ShortSleepNs: about what a futex round trip costs) means
//   the work came just after the spinning stopped: the budget doubles.
// - Written by the site's waiters without synchronization: a lost update costs one wait a different budget,
//   never a wake-up; the value is always within [Floor, Ceiling].

/// <summary>The spin budget of one waiting site, learned from how its waits end (see <see cref="IdleSpinner"/>).</summary>
internal sealed class SpinTuner
{
    /// <summary>The least a wait spins before it may sleep.</summary>
    public const int Floor = 64;

    /// <summary>The most a wait spins before it may yield and sleep.</summary>
    public const int Ceiling = 3000;

    private const long ShortSleepNs = 50_000;

    private int _limit = Ceiling;

    /// <summary>The pauses the next wait spins before it yields.</summary>
    public int Limit => Volatile.Read(ref _limit);

    /// <summary>The wait found its work after <paramref name="turns"/> idle turns.</summary>
    public void Found(int turns)
    {
        int limit = Limit;
        if (turns > limit / 2)
        {
            Volatile.Write(ref _limit, Math.Min(Ceiling, Math.Max(limit, 2 * turns)));
        }
    }

    /// <summary>The wait spun its whole budget without its work arriving.</summary>
    public void Exhausted()
    {
        int limit = Limit;
        Volatile.Write(ref _limit, Math.Max(Floor, limit - (limit / 4)));
    }

    /// <summary>The wait slept <paramref name="sleptNs"/> ns before its work (or a wake-up) came.</summary>
    public void Woke(long sleptNs)
    {
        if (sleptNs < ShortSleepNs)
        {
            Volatile.Write(ref _limit, Math.Min(Ceiling, 2 * Limit));
        }
    }
}
