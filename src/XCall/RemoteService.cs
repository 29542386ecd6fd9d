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

    /// <summary>Closes the connection; pending and later calls fail with <see cref="XCallDisconnectedException"/>.</summary>
    public void Dispose()
    {
        Connection?.Dispose();
        _owner?.Dispose();
    }
}
