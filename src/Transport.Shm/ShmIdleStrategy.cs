namespace XCall.Transport.Shm;

/// <summary>How a thread that waits for the peer (a frame to read, or room in a full ring) spends its time.</summary>
public enum ShmIdleStrategy
{
    /// <summary>Poll without ever sleeping: the lowest latency, one busy core per waiting side. For benchmarks
    /// and latency-critical pairs on machines with cores to spare.</summary>
    BusySpin,

    /// <summary>Default. Spin up to a few thousand pause iterations, then yield, then sleep on a futex in the segment
    /// until the peer wakes it: close to <see cref="BusySpin"/> under load, no CPU once idle. The spinning adapts:
    /// each waiting thread spins about as long as spinning has paid off for it lately, and a receive thread or a writer
    /// waiting for room stops early (no yields) while more threads are runnable than the machine has cores, so it does not
    /// hold a core its peer or a caller needs. A synchronous caller waiting for its reply spins its budget on busy cores
    /// too: the peer is at work on its call.</summary>
    Adaptive,

    /// <summary>Spin only briefly before sleeping on the futex: frugal servers; a reply that is not immediate
    /// costs a wake-up (tens of microseconds on a virtual machine).</summary>
    Blocking,
}
