namespace XCall.Channels;

/// <summary>
/// How the blocking reads and writes of a channel wait (<see cref="CspChannel{T}.BlockingWaiter"/>): a layer that
/// carries the channel's values from elsewhere may do that work on the waiting thread, so the value that ends the
/// wait needs no other thread to wake this one. XCall.Channels.Distributed sets one on the channels it hosts.
/// </summary>
public interface IBlockingWaiter
{
    /// <summary>
    /// Returns once <paramref name="operation"/> completed (<see cref="IPendingOperation.IsCompleted"/>), on the thread
    /// that made it; may block on it (<see cref="IPendingOperation.Wait"/>) or do other work meanwhile. It must not throw:
    /// the operation stays the caller's, so a waiter that fails or returns early is followed by a plain blocking wait.
    /// </summary>
    void Wait(IPendingOperation operation);

    /// <summary>
    /// A blocking operation of the channel completed without waiting, successfully (its value, or its reader, was there
    /// already), on the thread that made it: the waiter may prepare for that thread's next wait. The default does nothing.
    /// </summary>
    void CompletedAtOnce()
    {
    }
}

/// <summary>A blocking channel operation that has not completed yet, as an <see cref="IBlockingWaiter"/> waits for it.</summary>
public interface IPendingOperation
{
    /// <summary>The operation completed (a value was read or taken, or it failed: poison, completion, cancellation).</summary>
    bool IsCompleted { get; }

    /// <summary>Blocks the calling thread until the operation completes or <paramref name="timeout"/> passes
    /// (<see cref="Timeout.InfiniteTimeSpan"/>: for ever); false when the timeout passed first.</summary>
    bool Wait(TimeSpan timeout);
}
