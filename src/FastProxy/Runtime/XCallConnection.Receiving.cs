using XCall.Transport;

namespace XCall.Runtime;

public sealed partial class XCallConnection
{
    /// <summary>
    /// The connection whose received call runs on this thread (the synchronous part of a call it dispatched,
    /// inline on the thread that reads its frames or on the pool); null when this thread runs none. A service
    /// uses it to learn which connection a call came over, for <see cref="WaitReceiving"/>.
    /// </summary>
    public static XCallConnection? Current => t_dispatching;

    /// <summary>
    /// Blocks until <paramref name="condition"/> says the wait is over (<see cref="IReplyWait.WaitOver"/>) or
    /// <paramref name="timeout"/> passes, reading this connection's incoming frames on the calling thread meanwhile
    /// when the transport lets it (<see cref="FrameChannel.WaitReceiving"/>): the calls that arrive run on this
    /// thread as they would on the thread that reads the frames, so a condition that such a call ends (a message a
    /// one-way call delivers to a mailbox) ends the wait with no hand-off between threads. When another thread
    /// reads the frames, this one blocks on <paramref name="condition"/> (<see cref="IReplyWait.Wait"/>) and that
    /// thread runs the calls. The condition's <see cref="IReplyWait.IsNested"/> is false unless the waiting thread
    /// runs a call received on this connection.
    /// </summary>
    /// <param name="condition">What the wait is for; whoever ends it must also release <see cref="IReplyWait.Wait"/>.</param>
    /// <param name="timeout">How long to wait at most, or <see cref="Timeout.InfiniteTimeSpan"/>.</param>
    /// <returns>False when the timeout passed first.</returns>
    /// <exception cref="InvalidOperationException">This thread runs a call of this connection on the thread that
    /// reads its frames (an inline dispatch): while it waits, nothing would read them.</exception>
    public bool WaitReceiving(IReplyWait condition, TimeSpan timeout)
    {
        ArgumentNullException.ThrowIfNull(condition);
        if (timeout != Timeout.InfiniteTimeSpan)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(timeout, TimeSpan.Zero, nameof(timeout));
        }
        long deadline = timeout == Timeout.InfiniteTimeSpan ? long.MaxValue : Environment.TickCount64 + (long)Math.Ceiling(timeout.TotalMilliseconds);
        if (condition.WaitOver)
        {
            return true;
        }
        if (NestingCallId() == OnReceivingThread)
        {
            throw new InvalidOperationException(
                $"A call received on the connection to {RemoteEndpoint} runs on the thread that reads its frames, which cannot wait for them as well: " +
                "wait on another thread, or serve the contract with DispatchMode.Concurrent.");
        }
        CompletionDrain.BeforeBlockingWait();
        if (IsDispatchingOnThisThread)
        {
            return condition.Wait(deadline); // a call of this connection on the pool leaves the reading to the receiving thread
        }
        return Channel.WaitReceiving(condition, deadline);
    }
}
