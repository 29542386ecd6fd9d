using System.ComponentModel;

namespace XCall.Runtime;

/// <summary>Everything generated for one [Remotable] interface: how to make its proxies and its dispatcher.</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class Contract<T> where T : class
{
    /// <summary>Full name of the interface.</summary>
    public abstract string Name { get; }

    /// <summary>Hash of the contract (every method signature).</summary>
    public abstract ulong Hash { get; }

    /// <summary>The dispatcher that serves calls of this contract.</summary>
    public abstract Dispatcher Dispatcher { get; }

    /// <summary>A proxy whose calls travel as frames over <paramref name="connection"/>.</summary>
    public abstract T CreateProxy(XCallConnection connection, ulong objectId);

    /// <summary>A proxy for an object in another load context of this process: arguments are copied, no reference crosses.</summary>
    public abstract T CreateDomainProxy(Domain.DomainLink link);
}
