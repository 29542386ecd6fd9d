using System.ComponentModel;

namespace XCall.Runtime;

/// <summary>Base of the generated proxies that carry calls as frames over a connection.</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class ProxyBase
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
}
