using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace XCall.Domain;

/// <summary>Base of the generated domain proxies.</summary>
/// <remarks>
/// The proxy keeps the target in its own field, one load away from the call; closing the
/// <see cref="DomainLink"/> clears that field, after which calls fail with <see cref="XCallDisconnectedException"/>.
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class DomainProxyBase
{
    private object? _target;

    /// <summary>Creates a proxy over <paramref name="link"/>.</summary>
    protected DomainProxyBase(DomainLink link)
    {
        Link = link;
        _target = link.Attach(this);
    }

    /// <summary>The link to the target object.</summary>
    protected DomainLink Link { get; }

    /// <summary>The target; throws <see cref="XCallDisconnectedException"/> once the link is closed.</summary>
    protected object Target
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Volatile.Read(ref _target) ?? ThrowClosed();
    }

    internal void Detach() => Volatile.Write(ref _target, null);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private object ThrowClosed() => throw new XCallDisconnectedException(Link.Endpoint, "the domain host was disposed");
}
