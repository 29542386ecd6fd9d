using XCall.Transport;

namespace XCall.Communicator.Eager;

/// <summary>
/// What a waiting receive pumps a connection for (<see cref="Runtime.XCallConnection.WaitReceiving"/>) once the
/// inbox announced a large message of that source: the large message's arrival, or the receive's completion.
/// </summary>
internal sealed class LargeArrival(ReceiveRequest request, Func<bool> arrived) : IReplyWait
{
    public bool IsCompleted => request.IsDone || arrived();

    public bool WaitOver => IsCompleted;

    public bool IsNested => false;

    /// <summary>Another thread reads the connection: spins and yields until the large message is in or the deadline passes.</summary>
    public bool Wait(long deadline)
    {
        var spin = new SpinWait();
        while (!IsCompleted)
        {
            if (Environment.TickCount64 >= deadline)
            {
                return false;
            }
            spin.SpinOnce(sleep1Threshold: -1);
        }
        return true;
    }
}
