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
    private readonly DomainLink _root;
    // Root only: the proxies made for each object that crossed a link of this host (each over a link of its
    // own); an entry lives as long as its object, which its proxies' links hold while any proxy lives.
    private ConditionalWeakTable<object, List<DomainProxyBase>>? _crossed;
    private object? _target;

    /// <summary>Creates a link to <paramref name="target"/>, reachable as <paramref name="endpoint"/>.</summary>
    public DomainLink(object target, string endpoint)
    {
        _target = target;
        Endpoint = endpoint;
        _root = this;
    }

    private DomainLink(object target, DomainLink root)
    {
        _target = target;
        Endpoint = root.Endpoint;
        _root = root;
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

    /// <summary>Drops the target and detaches every proxy made over this link (and, for a host's link, over
    /// the links of the objects that crossed it).</summary>
    public void Close()
    {
        DomainProxyBase[] proxies;
        DomainProxyBase[] crossed;
        lock (_lock)
        {
            Volatile.Write(ref _target, null);
            proxies = [.. _proxies];
            _proxies.Clear();
            crossed = _crossed is null ? [] : [.. _crossed.SelectMany(entry => entry.Value)];
            _crossed = null;
        }
        foreach (DomainProxyBase proxy in proxies)
        {
            proxy.Detach();
        }
        foreach (DomainProxyBase proxy in crossed)
        {
            proxy.Link.Close();
        }
    }

    /// <summary>
    /// An object reference crossing this link (a [Remotable] argument or result): the receiving side gets a
    /// domain proxy of its own, which fails with <see cref="XCallDisconnectedException"/> once the host is
    /// disposed and then no longer holds the object. The same object crossing again as the same contract
    /// yields the same proxy;
    /// a proxy crossing back arrives as the object it stands for.
    /// </summary>
    public T? Wrap<T>(T? value) where T : class
    {
        if (value is null)
        {
            return null;
        }
        if (value is DomainProxyBase { Link: var link } && link._root == _root && Volatile.Read(ref link._target) is T home)
        {
            return home;
        }
        DomainLink root = _root;
        lock (root._lock)
        {
            if (root._target is null)
            {
                ThrowClosed();
            }
            root._crossed ??= new ConditionalWeakTable<object, List<DomainProxyBase>>();
            List<DomainProxyBase> known = root._crossed.GetOrCreateValue(value);
            foreach (DomainProxyBase proxyOfValue in known)
            {
                if (proxyOfValue is T same)
                {
                    return same; // one proxy per object and contract
                }
            }
            T proxy = Runtime.ContractRegistry.Get<T>().CreateDomainProxy(new DomainLink(value, root));
            known.Add((DomainProxyBase)(object)proxy);
            return proxy;
        }
    }

    /// <summary>The context for one copy through a buffer (a writer's and then its reader's <c>Context</c>).</summary>
    public DomainCopyScope BeginCopy() => new(this);

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
