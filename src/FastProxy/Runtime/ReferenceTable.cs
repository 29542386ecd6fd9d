using System.Runtime.CompilerServices;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>
/// The objects a connection serves and holds by reference: the services it exposes under fixed ids, the objects
/// it exported by reference (sent as [Remotable] values), and its proxies for the peer's objects
/// (docs/remoting.md, "Object references").
/// </summary>
// Design:
// - Every table sits under _lock. The exposed services are also read without it on every call: _objects is copy
//   on write (services are exposed rarely, looked up per call) and _root is a volatile field.
// - The owner side counts how many times it sent each exported object (Sent); the receiving side counts how many
//   times it received each id (Received) and, when it drops its proxy (Dispose, or the proxy was collected),
//   sends one Release frame carrying that count. The owner subtracts it and forgets the object when nothing is
//   left, so a reference sent again while a Release is on its way stays alive. Exported ids start at 2^32, above
//   the service ids of ServiceTable.
// - A reconnecting channel replaces a lost link with a new one (FrameChannel.LinkGeneration counts them), and the
//   peer on the new link knows nothing of the old one's references; it numbers its own exports from 2^32 again.
//   So every export and import records the link it went over: when that link is lost, its entries go
//   (DropLink), and a proxy of an older link fails its calls as disconnected, before its frame goes out,
//   instead of reaching whatever object the new peer has under the same id; its release is not sent. The link
//   of an import is the one its frame came on, not the current one (a LinkScope names it). An import from a
//   link already lost (or older than an entry for the same id) gets a dead proxy that is not entered in the table.
// - The exports written into the frame open on the channel are listed (_openFrameExports): a frame that is
//   dropped instead of sent takes its counts back, since the peer never gets the ids and so never releases them.
//   The channel has one frame open at a time, except a reconnecting channel in its reconnect window (a frame
//   still open on the dead link, another on the new one): so each entry names the thread whose frame wrote it,
//   and a commit or abort touches its own thread's entries only. The list is read without the lock only to skip
//   the common case of a frame that exported nothing.
// - An exported object that implements IExportLifetime (a stream's producer) is told when its entry goes, however
//   it goes, after the lock is let go.
internal sealed class ReferenceTable(XCallConnection connection)
{
    private const ulong FirstExportId = 1UL << 32;

    private static readonly ConditionalWeakTable<object, ReleaseOnCollect> s_collectTrackers = new();

    private readonly object _lock = new();
    private volatile Dictionary<ulong, ExposedObject> _objects = new();
    private volatile ExposedObject? _root;
    private readonly Dictionary<ulong, ExportedObject> _exports = new();
    private readonly Dictionary<object, ulong> _exportIds = new(ReferenceEqualityComparer.Instance);
    private readonly Dictionary<ulong, ImportedReference> _imports = new();
    private readonly List<(int Thread, ulong Id)> _openFrameExports = [];
    private ulong _nextExportId = FirstExportId;
    private volatile int _lostLink = -1;

    /// <summary>The newest link generation lost: everything exchanged over it or an earlier one is dead.</summary>
    public int LostLink => _lostLink;

    /// <summary>Objects exported by reference and not released yet.</summary>
    public int ExportedCount
    {
        get
        {
            lock (_lock)
            {
                return _exports.Count;
            }
        }
    }

    /// <summary>The peer's objects this side holds proxies for.</summary>
    public int ImportedCount
    {
        get
        {
            lock (_lock)
            {
                return _imports.Count;
            }
        }
    }

    public void ExposeRoot(object target, Dispatcher dispatcher)
    {
        lock (_lock)
        {
            _root = new ExposedObject(target, dispatcher);
        }
    }

    public void Expose(ulong objectId, object target, Dispatcher dispatcher)
    {
        lock (_lock)
        {
            _objects = new Dictionary<ulong, ExposedObject>(_objects) { [objectId] = new ExposedObject(target, dispatcher) };
        }
    }

    /// <summary>The object a call frame names: a service, the root, or an exported object.</summary>
    /// <exception cref="XCallProtocolException">Nothing is exposed under <paramref name="objectId"/>.</exception>
    public ExposedObject FindObject(ulong objectId)
    {
        ExposedObject? found = objectId == 0 ? _root : _objects.GetValueOrDefault(objectId);
        if (found is null)
        {
            lock (_lock)
            {
                if (_exports.TryGetValue(objectId, out ExportedObject? e))
                {
                    found = e.Exposed;
                }
            }
        }
        return found ?? throw new XCallProtocolException($"No object with id {objectId} is exposed on this connection.");
    }

    /// <summary>The open frame is sent: its exports stand.</summary>
    public void KeepFrameExports()
    {
        if (_openFrameExports.Count != 0)
        {
            lock (_lock)
            {
                ForgetFrameExportsUnsynchronized(Environment.CurrentManagedThreadId);
            }
        }
    }

    /// <summary>The open frame is dropped: what it exported is counted back (and forgotten at zero).</summary>
    public void RollBackFrameExports()
    {
        if (_openFrameExports.Count == 0)
        {
            return;
        }
        int me = Environment.CurrentManagedThreadId;
        List<IExportLifetime>? gone = null;
        lock (_lock)
        {
            foreach ((int thread, ulong id) in _openFrameExports)
            {
                if (thread == me && _exports.TryGetValue(id, out ExportedObject? exported) && --exported.Sent <= 0)
                {
                    _exports.Remove(id);
                    _exportIds.Remove(exported.Target);
                    Note(ref gone, exported.Target);
                }
            }
            ForgetFrameExportsUnsynchronized(me);
        }
        NotifyUnexported(gone);
    }

    /// <summary>Drops the open-frame entries of thread <paramref name="me"/> (a loop, not a capturing predicate: this runs per call that exports).</summary>
    private void ForgetFrameExportsUnsynchronized(int me)
    {
        for (int i = _openFrameExports.Count - 1; i >= 0; i--)
        {
            if (_openFrameExports[i].Thread == me)
            {
                _openFrameExports.RemoveAt(i);
            }
        }
    }

    /// <summary>Exports <paramref name="target"/> in a frame open on link <paramref name="link"/> (the same object
    /// always gets the same id on one link) and counts one more send.</summary>
    public ulong Export(object target, Dispatcher dispatcher, int link)
    {
        lock (_lock)
        {
            if (_exportIds.TryGetValue(target, out ulong id))
            {
                ExportedObject exported = _exports[id];
                if (exported.Link == link)
                {
                    exported.Sent++;
                    _openFrameExports.Add((Environment.CurrentManagedThreadId, id));
                    return id;
                }
                if (exported.Link > link)
                {
                    // This frame goes over a link older than the entry's (it is dead and the frame will not
                    // arrive): leave the newer link's entry and its count alone.
                    return _nextExportId++;
                }
                // Sent over a link that is gone (its loss is not handled yet): the new peer gets a new id.
                _exports.Remove(id);
                _exportIds.Remove(target);
            }
            if (link <= _lostLink)
            {
                return _nextExportId++; // nothing can reach it over a lost link: not entered
            }
            id = _nextExportId++;
            _exportIds.Add(target, id);
            _exports.Add(id, new ExportedObject(target, dispatcher, link) { Sent = 1 });
            _openFrameExports.Add((Environment.CurrentManagedThreadId, id));
            return id;
        }
    }

    /// <summary>The object this side exposed under <paramref name="objectId"/> (a proxy coming home).</summary>
    /// <exception cref="XCallProtocolException">Nothing is exposed under <paramref name="objectId"/>.</exception>
    public object FindExported(ulong objectId)
    {
        lock (_lock)
        {
            if (_exports.TryGetValue(objectId, out ExportedObject? exported))
            {
                return exported.Target;
            }
            if (objectId != 0 && _objects.TryGetValue(objectId, out ExposedObject? service))
            {
                return service.Target;
            }
        }
        throw new XCallProtocolException($"No object with id {objectId} is exposed on this connection.");
    }

    /// <summary>The proxy for the peer's object <paramref name="objectId"/>, received over link <paramref name="link"/>: one per id while it lives.</summary>
    public T Import<T>(ulong objectId, int link) where T : class
    {
        lock (_lock)
        {
            _imports.TryGetValue(objectId, out ImportedReference? reference);
            if (link <= _lostLink || (reference is not null && reference.Link > link))
            {
                // From a link that is gone: the object is unreachable, and the id may name another object on
                // the current link. A proxy that fails its calls, kept out of the table, with nothing to release.
                ImportedReference dead = new(objectId, link);
                T deadProxy = ContractRegistry.Get<T>().CreateProxy(connection, objectId);
                ((ProxyBase)(object)deadProxy).Reference = dead;
                return deadProxy;
            }
            if (reference is not null && reference.Link != link)
            {
                // The same id from the peer of an earlier link: another object. The old proxies keep their
                // (dead) reference and fail; this one starts afresh.
                _imports.Remove(objectId);
                reference = null;
            }
            if (reference is not null)
            {
                reference.Received++;
                if (reference.Proxy.TryGetTarget(out object? live) && live is T same)
                {
                    return same;
                }
                // Collected (its release is not sent yet) or asked for as another contract: a new proxy
                // takes over the same reference and its count.
            }
            else
            {
                reference = new ImportedReference(objectId, link) { Received = 1 };
                _imports.Add(objectId, reference);
            }
            T proxy = ContractRegistry.Get<T>().CreateProxy(connection, objectId);
            ((ProxyBase)(object)proxy).Reference = reference;
            reference.Generation++;
            reference.Proxy.SetTarget(proxy);
            s_collectTrackers.AddOrUpdate(proxy, new ReleaseOnCollect(connection, reference, reference.Generation));
            return proxy;
        }
    }

    /// <summary>
    /// Drops the hold on <paramref name="reference"/> (its proxy was disposed; or, with a <paramref name="generation"/>,
    /// the proxy of that generation was collected): true with the count the Release frame carries, false when
    /// there is nothing to release.
    /// </summary>
    public bool TakeRelease(ImportedReference reference, int? generation, out int count)
    {
        count = 0;
        lock (_lock)
        {
            bool current = _imports.TryGetValue(reference.ObjectId, out ImportedReference? entry) && entry == reference;
            if (reference.Released || (generation is { } g && reference.Generation != g) || !current)
            {
                reference.Released |= generation is null; // a disposed proxy stays released
                return false;
            }
            reference.Released = true;
            _imports.Remove(reference.ObjectId);
            count = reference.Received;
            return true;
        }
    }

    /// <summary>The peer released <paramref name="count"/> sends of exported object <paramref name="objectId"/>.</summary>
    public void OnRelease(ulong objectId, uint count)
    {
        List<IExportLifetime>? gone = null;
        lock (_lock)
        {
            if (_exports.TryGetValue(objectId, out ExportedObject? exported))
            {
                exported.Sent -= count;
                if (exported.Sent <= 0)
                {
                    _exports.Remove(objectId);
                    _exportIds.Remove(exported.Target);
                    Note(ref gone, exported.Target);
                }
            }
        }
        NotifyUnexported(gone);
    }

    /// <summary>
    /// References die with their link: what went over link <paramref name="linkGeneration"/> (or an earlier
    /// one) is no longer exposed or held; the proxies fail with <see cref="XCallDisconnectedException"/>.
    /// </summary>
    public void DropLink(int linkGeneration)
    {
        List<IExportLifetime>? gone = null;
        lock (_lock)
        {
            if (linkGeneration > _lostLink)
            {
                _lostLink = linkGeneration;
            }
            foreach (KeyValuePair<ulong, ExportedObject> export in _exports.Where(e => e.Value.Link <= linkGeneration).ToArray())
            {
                _exports.Remove(export.Key);
                _exportIds.Remove(export.Value.Target);
                Note(ref gone, export.Value.Target);
            }
            foreach (ulong id in _imports.Where(i => i.Value.Link <= linkGeneration).Select(i => i.Key).ToArray())
            {
                _imports.Remove(id);
            }
        }
        NotifyUnexported(gone);
    }

    /// <summary>References die with the connection: the objects are no longer exposed, the proxies fail with <see cref="XCallDisconnectedException"/>.</summary>
    public void Clear()
    {
        List<IExportLifetime>? gone = null;
        lock (_lock)
        {
            foreach (ExportedObject exported in _exports.Values)
            {
                Note(ref gone, exported.Target);
            }
            _exports.Clear();
            _exportIds.Clear();
            // Proxies stay un-released, so their calls fail as disconnected rather than disposed.
            _imports.Clear();
        }
        NotifyUnexported(gone);
    }

    private static void Note(ref List<IExportLifetime>? gone, object target)
    {
        if (target is IExportLifetime lifetime)
        {
            (gone ??= []).Add(lifetime);
        }
    }

    /// <summary>Tells the objects no longer exposed (<see cref="IExportLifetime"/>); called outside the lock.</summary>
    private static void NotifyUnexported(List<IExportLifetime>? gone)
    {
        if (gone is null)
        {
            return;
        }
        foreach (IExportLifetime lifetime in gone)
        {
            lifetime.Unexported();
        }
    }

    private sealed class ExportedObject(object target, Dispatcher dispatcher, int link)
    {
        public object Target { get; } = target;

        public Dispatcher Dispatcher { get; } = dispatcher;

        /// <summary>What calls naming the object find: made once, not per call.</summary>
        public ExposedObject Exposed { get; } = new(target, dispatcher);

        /// <summary>The <see cref="Transport.FrameChannel.LinkGeneration"/> the object's id was sent over.</summary>
        public int Link { get; } = link;

        public long Sent { get; set; }
    }

    /// <summary>
    /// Lives exactly as long as its proxy (a <see cref="ConditionalWeakTable{TKey, TValue}"/> value); its
    /// finalizer queues the release, so the finalizer thread never waits on the transport.
    /// </summary>
    private sealed class ReleaseOnCollect(XCallConnection connection, ImportedReference reference, int generation)
    {
        ~ReleaseOnCollect()
        {
            if (!connection.IsClosed)
            {
                ThreadPool.UnsafeQueueUserWorkItem(static s => s.connection.ReleaseCollected(s.reference, s.generation), (connection, reference, generation), preferLocal: false);
            }
        }
    }
}
