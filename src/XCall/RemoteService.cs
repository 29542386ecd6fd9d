using XCall.Runtime;

namespace XCall;

/// <summary>An open service: its proxy, and the connection it travels on. Dispose to close.</summary>
/// <typeparam name="T">The [Remotable] contract.</typeparam>
public sealed class RemoteService<T> : IDisposable where T : class
{
    private readonly IDisposable? _owner;

    internal RemoteService(T proxy, XCallAddress address, string transport, XCallConnection? connection, IDisposable? owner)
    {
        Proxy = proxy;
        Address = address;
        Transport = transport;
        Connection = connection;
        _owner = owner;
    }

    /// <summary>The proxy: call the service through it.</summary>
    public T Proxy { get; }

    /// <summary>The address that was opened.</summary>
    public XCallAddress Address { get; }

    /// <summary>The transport actually used: <c>domain</c>, <c>shm</c> or <c>tcp</c>.</summary>
    public string Transport { get; }

    /// <summary>The connection (null for the domain transport, which has none).</summary>
    public XCallConnection? Connection { get; }

    /// <summary>The state of the link (always <see cref="ConnectionState.Connected"/> for the domain transport until disposed).</summary>
    public ConnectionState State { get; private set; } = ConnectionState.Connected;

    /// <summary>Raised when the link is lost, comes back, or is closed; with the error of a loss.</summary>
    public event Action<RemoteService<T>, ConnectionState, Exception?>? StateChanged;

    internal void OnStateChanged(ConnectionState state, Exception? error)
    {
        State = state;
        StateChanged?.Invoke(this, state, error);
    }

    /// <summary>Closes the connection; pending and later calls fail with <see cref="XCallDisconnectedException"/>.</summary>
    public void Dispose()
    {
        Connection?.Dispose();
        _owner?.Dispose();
    }
}
