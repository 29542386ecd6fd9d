using System.ComponentModel;

namespace XCall.Runtime;

/// <summary>
/// Base of the generated proxies that carry calls as frames over a connection. A proxy received by
/// reference (a [Remotable] value) holds the peer's object alive until it is disposed or collected; either
/// sends a Release frame. Disposing any other proxy does nothing.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class ProxyBase : IDisposable
{
    /// <summary>Creates a proxy for object <paramref name="objectId"/> of <paramref name="connection"/>'s peer.</summary>
    protected ProxyBase(XCallConnection connection, ulong objectId, Dispatcher contract)
    {
        Connection = connection;
        ObjectId = objectId;
        Contract = contract;
    }

    /// <summary>The contract's dispatcher, for its name and method names in diagnostics.</summary>
    public Dispatcher Contract { get; }

    /// <summary>The connection the calls travel on.</summary>
    public XCallConnection Connection { get; }

    /// <summary>The remote object's id on that connection.</summary>
    public ulong ObjectId { get; }

    /// <summary>This side's hold on the remote object, when the proxy was received by reference.</summary>
    internal XCallConnection.ImportedReference? Reference { get; set; }

    /// <summary>Releases the remote object when this proxy was received by reference; later calls raise <see cref="ObjectDisposedException"/>.</summary>
    public void Dispose()
    {
        Connection.Release(this);
        GC.SuppressFinalize(this);
    }
}
