using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm;

/// <summary>
/// Whether more threads want this machine's cores than it has, as the transport's own waits ask before they spin
/// on (they sleep at once then: a spinning waiter may hold the core its peer waits for). Public for the layers that
/// spin on shared memory of their own (the communicator's eager inbox), so both read one sampled figure.
/// </summary>
public static class CoreLoad
{
    /// <summary>The turn of a spinning wait at which it should ask <see cref="Oversubscribed"/>: a reply that comes sooner never pays for the question.</summary>
    public const int ProbeTurn = IdleSpinner.ProbeTurn;

    /// <summary>True when, over the last few samples (at most one per 2 ms, from /proc/loadavg), more threads were runnable than there are cores.</summary>
    public static bool Oversubscribed => CoreDemand.Oversubscribed;
}
