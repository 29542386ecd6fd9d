using XCall.Transport;

namespace XCall.Communicator.Eager;

/// <summary>
/// What a waiting receive pumps a connection for (<see cref="Runtime.XCallConnection.WaitReceiving(Transport.IReplyWait, TimeSpan)"/>) once the
/// inbox announced a large message of that source: the large message's arrival, or the receive's completion.
/// </summary>
internal sealed class LargeArrival(ReceiveRequest request, Func<bool> arrived) : IReplyWait
{
    public bool IsCompleted => request.IsDone || arrived();

    public bool WaitOver => IsCompleted;

    public bool IsNested => false;

    /// <summary>
    /// Another thread reads the connection, which runs the call: no wait here (the receive's own wait goes on, and
    /// sleeps where it would; the completion wakes it).
    /// </summary>
    public bool Wait(long deadline) => IsCompleted;
}
