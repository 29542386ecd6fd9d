using XCall.Transport;
using XCall.Transport.Shm;
using XCall.Transport.Tcp;

namespace XCall;

/// <summary>The accept loops of a served address; dispose to stop accepting (open connections stay until the server closes them).</summary>
public sealed class RemoteListener : IDisposable
{
    private readonly XCallServer _server;
    private readonly CancellationTokenSource _stop = new();
    private readonly List<IDisposable> _listeners = [];
    private readonly List<Task> _loops = [];

    internal RemoteListener(XCallServer server) => _server = server;

    /// <summary>The TCP address actually bound (its port filled in when 0 was asked), or null.</summary>
    public XCallAddress? TcpAddress { get; private set; }

    /// <summary>The shared-memory name served, or null.</summary>
    public string? ShmName { get; private set; }

    internal void AddShm(ShmListener listener)
    {
        _listeners.Add(listener);
        ShmName = listener.Name;
        _loops.Add(_server.ServeAsync(listener.AcceptAsync, _stop.Token));
    }

    internal void AddTcp(TcpChannelListener listener, XCallAddress asked)
    {
        _listeners.Add(listener);
        TcpAddress = XCallAddress.Parse($"tcp://{listener.LocalEndpoint.Address}:{listener.LocalEndpoint.Port}/{asked.Name}");
        _loops.Add(_server.ServeAsync(listener.AcceptAsync, _stop.Token));
    }

    /// <summary>Stops accepting and removes the listening socket files.</summary>
    public void Dispose()
    {
        _stop.Cancel();
        foreach (IDisposable listener in _listeners)
        {
            listener.Dispose();
        }
    }
}
