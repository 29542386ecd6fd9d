using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace XCall.Domain;

/// <summary>
/// The tie between domain proxies and one object in another load context. Closing it (when its
/// <see cref="DomainHost"/> is disposed) drops the reference, so the context can unload, and makes every
/// later call fail with <see cref="XCallDisconnectedException"/>.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public sealed class DomainLink
{
    private readonly object _lock = new();
    private readonly List<DomainProxyBase> _proxies = [];
    private object? _target;

    /// <summary>Creates a link to <paramref name="target"/>, reachable as <paramref name="endpoint"/>.</summary>
    public DomainLink(object target, string endpoint)
    {
        _target = target;
        Endpoint = endpoint;
    }

    /// <summary>The address, for messages (<c>domain://name</c>).</summary>
    public string Endpoint { get; }

    /// <summary>The target; throws <see cref="XCallDisconnectedException"/> once the link is closed.</summary>
    public object Target
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Volatile.Read(ref _target) ?? ThrowClosed();
    }

    /// <summary>True once closed.</summary>
    public bool IsClosed => Volatile.Read(ref _target) is null;

    /// <summary>Drops the target and detaches every proxy made over this link.</summary>
    public void Close()
    {
        DomainProxyBase[] proxies;
        lock (_lock)
        {
            Volatile.Write(ref _target, null);
            proxies = [.. _proxies];
            _proxies.Clear();
        }
        foreach (DomainProxyBase proxy in proxies)
        {
            proxy.Detach();
        }
    }

    internal object? Attach(DomainProxyBase proxy)
    {
        lock (_lock)
        {
            if (_target is not null)
            {
                _proxies.Add(proxy);
            }
            return _target;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private object ThrowClosed() => throw new XCallDisconnectedException(Endpoint, "the domain host was disposed");
}
