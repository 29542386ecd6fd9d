using XCall.Runtime;
using XCall.Transport;

namespace XCall.Channels.Distributed;

/// <summary>
/// The <see cref="IBlockingWaiter"/> of an unbuffered channel this process hosts: a thread of this process that blocks on
/// the channel reads the connection its remote ends used last while it waits, and the construct host's calls read there
/// (a remote write, a remote read) run on that thread (<see cref="XCallConnection.WaitReceiving(IReplyWait, TimeSpan, object?)"/>).
/// A remote write to a waiting reader then costs what a call does: no receive thread or pool thread takes the value to
/// the reader and wakes it. The host's methods never block (remote ends write and read through its async methods).
/// </summary>
/// <remarks>
/// What ends the wait from elsewhere (a local process, a remote end on another connection, poison, cancellation) ends it
/// too, noticed between the transport's polls, or within its sleep slice when the connection is idle
/// (docs/remoting.md, "Waiting threads read the connection").
/// </remarks>
internal sealed class RemoteEndsPump(IConstructHost host) : IBlockingWaiter
{
    private XCallConnection? _connection;
    private int _remoteOps; // remote ends' operations run (Saw); racing counts may lose one, which costs a lend at most
    private int _remoteOpsSeen; // _remoteOps at the local ends' last operation

    /// <summary>A remote end's call runs on this thread now: its connection is the one to read while a local end waits.</summary>
    public void Saw()
    {
        Volatile.Write(ref _remoteOps, _remoteOps + 1);
        if (XCallConnection.Current is { } connection && !ReferenceEquals(_connection, connection))
        {
            Volatile.Write(ref _connection, connection);
        }
    }

    /// <summary>
    /// A local end's operation needed no wait: a remote end's value (or read) was there first, brought by the thread that
    /// reads the connection when this one did not, which the remote end's frame had to wake. This thread, which reads on,
    /// lends itself the connection's receiving, so the remote end's next operation waits for it instead; without that, two
    /// processes that each find the other's value there first keep waking each other's receive threads.
    /// </summary>
    public void CompletedAtOnce()
    {
        // Only when a remote end's operation ran since this side's last: a local end's value or read wakes nobody.
        int remoteOps = Volatile.Read(ref _remoteOps);
        if (remoteOps == _remoteOpsSeen)
        {
            return;
        }
        _remoteOpsSeen = remoteOps;
        if (Volatile.Read(ref _connection) is { IsClosed: false } connection && !ReferenceEquals(XCallConnection.Current, connection))
        {
            connection.LendReceiving();
        }
    }

    public void Wait(IPendingOperation operation)
    {
        XCallConnection? connection = Volatile.Read(ref _connection);
        if (connection is null || connection.IsClosed || ReferenceEquals(XCallConnection.Current, connection))
        {
            // No remote end yet, or a call of that connection runs on this thread (its receiving is not ours to take).
            operation.Wait(Timeout.InfiniteTimeSpan);
        }
        else
        {
            OperationWait wait = OperationWait.Rent(operation);
            try
            {
                connection.WaitReceiving(wait, Timeout.InfiniteTimeSpan, host);
            }
            finally
            {
                wait.Return();
            }
        }
        _remoteOpsSeen = Volatile.Read(ref _remoteOps);
    }

    /// <summary>A pending channel operation as the transport's wait sees it. One per thread, reused.</summary>
    private sealed class OperationWait : IReplyWait
    {
        [ThreadStatic]
        private static OperationWait? t_spare;

        private IPendingOperation _operation = null!;

        public bool IsCompleted => _operation.IsCompleted;

        public bool WaitOver => _operation.IsCompleted;

        public bool IsNested => false;

        public bool ComesBack => true; // a thread blocked on a channel mostly reads (or writes) it again next

        public bool Wait(long deadline) =>
            _operation.Wait(deadline == long.MaxValue ? Timeout.InfiniteTimeSpan : TimeSpan.FromMilliseconds(Math.Max(0, deadline - Environment.TickCount64)));

        public static OperationWait Rent(IPendingOperation operation)
        {
            OperationWait wait = t_spare ?? new OperationWait();
            t_spare = null;
            wait._operation = operation;
            return wait;
        }

        public void Return()
        {
            _operation = null!;
            t_spare = this;
        }
    }
}

