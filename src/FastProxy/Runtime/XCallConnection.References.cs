using System.Runtime.CompilerServices;
using XCall.Transport;

namespace XCall.Runtime;

// Object references (docs/remoting.md, "Object references").
//
// Design: both tables sit under _objectLock. The owner side counts how many times it sent each exported
// object (Sent); the receiving side counts how many times it received each id (Received) and, when it
// drops its proxy (Dispose, or the proxy was collected), sends one Release frame carrying that count.
// The owner subtracts it and forgets the object when nothing is left, so a reference sent again while a
// Release is on its way stays alive. Exported ids start at 2^32, above the service ids of ServiceTable.
//
// A reconnecting channel replaces a lost link with a new one (Channel.LinkGeneration counts them), and the
// peer on the new link knows nothing of the old one's references; it numbers its own exports from 2^32
// again. So every export and import records the link it went over: when that link is lost, its entries
// go (OnLinkLost), and a proxy of an older link fails its calls as disconnected, before its frame goes
// out, instead of reaching whatever object the new peer has under the same id; its release is not sent.
// The link of an import is the one its frame came on, not the current one: a reply belongs to the link
// its call went out on (PendingCall.Link), a call's arguments to the link it arrived on; both are read
// through a LinkScope context naming it. An import from a link already lost (or older than an entry for
// the same id) gets a dead proxy that is not entered in the table.
public sealed partial class XCallConnection
{
    private const ulong FirstExportId = 1UL << 32;

    private static readonly ConditionalWeakTable<object, ReleaseOnCollect> s_collectTrackers = new();

    private readonly Dictionary<ulong, ExportedObject> _exports = new();
    private readonly Dictionary<object, ulong> _exportIds = new(ReferenceEqualityComparer.Instance);
    private readonly Dictionary<ulong, ImportedReference> _imports = new();
    private ulong _nextExportId = FirstExportId;
    private volatile int _lostLink = -1; // the newest link generation lost (everything at or below it is dead)
    private volatile LinkScope? _linkScope;

    /// <summary>How many objects this side exposes by reference to the peer (objects sent as [Remotable] values and not released yet).</summary>
    public int ExposedObjectCount
    {
        get
        {
            lock (_objectLock)
            {
                return _exports.Count;
            }
        }
    }

    /// <summary>How many of the peer's objects this side holds proxies for (received by reference and not released yet).</summary>
    public int ImportedReferenceCount
    {
        get
        {
            lock (_objectLock)
            {
                return _imports.Count;
            }
        }
    }

    // The exports written into the frame open on the channel: a frame that is dropped instead of sent (its
    // marshalling failed, its token was cancelled before it went) takes its counts back, since the peer never
    // gets the ids and so never releases them. Cleared when the frame is committed. The channel has one frame
    // open at a time (BeginFrame holds its send side until the commit or abort), except a reconnecting channel
    // in its reconnect window (a frame still open on the dead link, another on the new one): so each entry
    // names the thread whose frame wrote it, and a commit or abort touches its own thread's entries only.
    // Read without the lock only to skip the common case of a frame that exported nothing.
    private readonly List<(int Thread, ulong Id)> _openFrameExports = [];

    /// <summary>Sends the frame open on this thread (<paramref name="batched"/>: through
    /// <see cref="FrameChannel.CommitFrameBatched"/>); the references it exported stand.</summary>
    internal void SendOpenFrame(bool batched = false)
    {
        KeepFrameExports();
        if (batched)
        {
            Channel.CommitFrameBatched();
        }
        else
        {
            Channel.CommitFrame();
        }
    }

    /// <summary>Drops the frame open on this thread; the references it exported are counted back.</summary>
    internal void DropOpenFrame()
    {
        RollBackFrameExports();
        Channel.AbortFrame();
    }

    /// <summary>
    /// Begins a frame that belongs to link <paramref name="link"/> (a reply, an error, a release about one of
    /// its objects): null, with nothing left open, when that link is gone, also when a reconnect replaced it
    /// while the frame was being begun.
    /// </summary>
    internal System.Buffers.IBufferWriter<byte>? BeginFrameOnLink(in FrameHeader header, int link)
    {
        if (IsLinkLost(link))
        {
            return null;
        }
        System.Buffers.IBufferWriter<byte> output = Channel.BeginFrame(header);
        if (Channel.LinkGeneration != link)
        {
            Channel.AbortFrame();
            return null;
        }
        return output;
    }

    /// <summary>The open frame is sent: its exports stand.</summary>
    private void KeepFrameExports()
    {
        if (_openFrameExports.Count != 0)
        {
            int me = Environment.CurrentManagedThreadId;
            lock (_objectLock)
            {
                _openFrameExports.RemoveAll(e => e.Thread == me);
            }
        }
    }

    /// <summary>The open frame is dropped: what it exported is counted back (and forgotten at zero).</summary>
    private void RollBackFrameExports()
    {
        if (_openFrameExports.Count == 0)
        {
            return;
        }
        int me = Environment.CurrentManagedThreadId;
        lock (_objectLock)
        {
            foreach ((int thread, ulong id) in _openFrameExports)
            {
                if (thread == me && _exports.TryGetValue(id, out ExportedObject? exported) && --exported.Sent <= 0)
                {
                    _exports.Remove(id);
                    _exportIds.Remove(exported.Target);
                }
            }
            _openFrameExports.RemoveAll(e => e.Thread == me);
        }
    }

    /// <summary>Whether link <paramref name="link"/> is gone: lost, or replaced by a newer one.</summary>
    internal bool IsLinkLost(int link) => link <= _lostLink || link < Channel.LinkGeneration;

    /// <summary>
    /// The reader context (<see cref="XCall.Marshal.MarshalReader.Context"/>) for a payload that came over link
    /// <paramref name="link"/>: the connection itself while that link is the current one (always, without a
    /// reconnecting channel; custom marshallers find the connection there), else a <see cref="LinkScope"/>
    /// naming the old link, so references in the payload are taken as the old link's.
    /// </summary>
    internal object ReadContextOf(int link) => link == Channel.LinkGeneration ? this : ScopeOf(link);

    /// <summary>The reader context for payloads that came over link <paramref name="link"/> (one object per link, cached for the newest).</summary>
    internal LinkScope ScopeOf(int link)
    {
        LinkScope? scope = _linkScope;
        if (scope is not null && scope.Link == link)
        {
            return scope;
        }
        scope = new LinkScope(this, link);
        if (_linkScope is not { } cached || cached.Link < link)
        {
            _linkScope = scope;
        }
        return scope;
    }

    /// <summary>Exposes <paramref name="target"/> by reference (the same object always gets the same id) and counts one more send.</summary>
    internal ulong ExportObject(object target, Dispatcher dispatcher)
    {
        // Called while the frame that carries the id is open, so the link it goes over is settled.
        int link = Channel.LinkGeneration;
        lock (_objectLock)
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
    internal object FindExported(ulong objectId)
    {
        lock (_objectLock)
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

    /// <summary>The proxy for the peer's object <paramref name="objectId"/>: one per id while it lives.</summary>
    internal T ImportProxy<T>(ulong objectId, int link) where T : class
    {
        lock (_objectLock)
        {
            _imports.TryGetValue(objectId, out ImportedReference? reference);
            if (link <= _lostLink || (reference is not null && reference.Link > link))
            {
                // From a link that is gone: the object is unreachable, and the id may name another object on
                // the current link. A proxy that fails its calls, kept out of the table, with nothing to release.
                ImportedReference dead = new(objectId, link);
                T deadProxy = ContractRegistry.Get<T>().CreateProxy(this, objectId);
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
            T proxy = ContractRegistry.Get<T>().CreateProxy(this, objectId);
            ((ProxyBase)(object)proxy).Reference = reference;
            reference.Generation++;
            reference.Proxy.SetTarget(proxy);
            s_collectTrackers.AddOrUpdate(proxy, new ReleaseOnCollect(this, reference, reference.Generation));
            return proxy;
        }
    }

    /// <summary>Drops this side's reference to the peer's object behind <paramref name="proxy"/> and tells the peer.</summary>
    internal void Release(ProxyBase proxy)
    {
        if (proxy.Reference is not { } reference)
        {
            return;
        }
        int count;
        lock (_objectLock)
        {
            if (reference.Released || !_imports.TryGetValue(reference.ObjectId, out ImportedReference? current) || current != reference)
            {
                reference.Released = true;
                return;
            }
            reference.Released = true;
            _imports.Remove(reference.ObjectId);
            count = reference.Received;
        }
        SendRelease(reference, count);
    }

    private void ReleaseCollected(ImportedReference reference, int generation)
    {
        int count;
        lock (_objectLock)
        {
            if (reference.Released || reference.Generation != generation
                || !_imports.TryGetValue(reference.ObjectId, out ImportedReference? current) || current != reference)
            {
                return;
            }
            reference.Released = true;
            _imports.Remove(reference.ObjectId);
            count = reference.Received;
        }
        SendRelease(reference, count);
    }

    private void SendRelease(ImportedReference reference, int count)
    {
        try
        {
            TrySendControl(FrameKind.Release, 0, reference.ObjectId, (uint)count, reference.Link);
        }
        catch (ObjectDisposedException)
        {
            // The channel is gone, and the peer's table with it.
        }
    }

    private void OnRelease(in FrameHeader header)
    {
        lock (_objectLock)
        {
            if (_exports.TryGetValue(header.ObjectId, out ExportedObject? exported))
            {
                exported.Sent -= header.MethodId;
                if (exported.Sent <= 0)
                {
                    _exports.Remove(header.ObjectId);
                    _exportIds.Remove(exported.Target);
                }
            }
        }
    }

    /// <summary>
    /// References die with their link: what went over link <paramref name="linkGeneration"/> (or an earlier
    /// one) is no longer exposed or held; the proxies fail with <see cref="XCallDisconnectedException"/>.
    /// </summary>
    private void DropReferences(int linkGeneration)
    {
        lock (_objectLock)
        {
            if (linkGeneration > _lostLink)
            {
                _lostLink = linkGeneration;
            }
            foreach (KeyValuePair<ulong, ExportedObject> export in _exports.Where(e => e.Value.Link <= linkGeneration).ToArray())
            {
                _exports.Remove(export.Key);
                _exportIds.Remove(export.Value.Target);
            }
            foreach (ulong id in _imports.Where(i => i.Value.Link <= linkGeneration).Select(i => i.Key).ToArray())
            {
                _imports.Remove(id);
            }
        }
    }

    /// <summary>References die with the connection: the objects are no longer exposed, the proxies fail with <see cref="XCallDisconnectedException"/>.</summary>
    private void DropReferences()
    {
        lock (_objectLock)
        {
            _exports.Clear();
            _exportIds.Clear();
            // Proxies stay un-released, so their calls fail as disconnected rather than disposed.
            _imports.Clear();
        }
    }

    /// <summary>
    /// The context of a reader of a payload that came over one link (<see cref="XCall.Marshal.MarshalReader.Context"/>):
    /// references in it belong to that link.
    /// </summary>
    internal sealed class LinkScope(XCallConnection connection, int link)
    {
        public XCallConnection Connection { get; } = connection;

        /// <summary>The <see cref="FrameChannel.LinkGeneration"/> the payload came over.</summary>
        public int Link { get; } = link;
    }

    private sealed class ExportedObject(object target, Dispatcher dispatcher, int link)
    {
        public object Target { get; } = target;

        public Dispatcher Dispatcher { get; } = dispatcher;

        /// <summary>The <see cref="FrameChannel.LinkGeneration"/> the object's id was sent over.</summary>
        public int Link { get; } = link;

        public long Sent { get; set; }
    }

    /// <summary>This side's hold on one of the peer's objects.</summary>
    internal sealed class ImportedReference(ulong objectId, int link)
    {
        public ulong ObjectId { get; } = objectId;

        /// <summary>The <see cref="FrameChannel.LinkGeneration"/> the reference came over.</summary>
        public int Link { get; } = link;

        public WeakReference<object> Proxy { get; } = new(null!);

        public int Received { get; set; }

        public int Generation { get; set; }

        public bool Released { get; set; }
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
