using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace XCall.Domain;

/// <summary>What a <see cref="DomainLink"/> needs of the proxies made over it.</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class DomainProxyBase
{
    /// <summary>Creates a proxy over <paramref name="link"/>.</summary>
    protected DomainProxyBase(DomainLink link) => Link = link;

    /// <summary>The link to the target object.</summary>
    protected internal DomainLink Link { get; }

    internal abstract void Detach();
}

/// <summary>Base of the generated domain proxies of contract <typeparamref name="T"/>.</summary>
/// <remarks>
/// The proxy keeps the target in a field typed as the contract, one load away from the call, so the JIT
/// can devirtualise and inline through it; closing the <see cref="DomainLink"/> clears that field, after
/// which calls fail with <see cref="XCallDisconnectedException"/>.
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class DomainProxyBase<T> : DomainProxyBase where T : class
{
    private T? _target;

    /// <summary>Creates a proxy over <paramref name="link"/>.</summary>
    protected DomainProxyBase(DomainLink link) : base(link) => _target = (T?)link.Attach(this);

    /// <summary>The target; throws <see cref="XCallDisconnectedException"/> once the link is closed.</summary>
    protected T Target
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Volatile.Read(ref _target) ?? ThrowClosed();
    }

    internal override void Detach() => Volatile.Write(ref _target, null);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private T ThrowClosed() => throw new XCallDisconnectedException(Link.Endpoint, "the domain host was disposed");
}
