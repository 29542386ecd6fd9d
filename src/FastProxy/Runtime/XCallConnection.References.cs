using System.Buffers;
using XCall.Runtime.CompilerServices;
using XCall.Transport;

namespace XCall.Runtime;

// Object references and links: the connection's side of ReferenceTable (docs/remoting.md, "Object references").
// A reply belongs to the link its call went out on (PendingCall.Link), a call's arguments to the link they arrived
// on; both are read through a context naming that link (ReadContextOf), so references in them are that link's.
public sealed partial class XCallConnection
{
    private volatile LinkScope? _linkScope;

    /// <summary>How many objects this side exposes by reference to the peer (objects sent as [Remotable] values and not released yet).</summary>
    public int ExposedObjectCount => _references.ExportedCount;

    /// <summary>How many of the peer's objects this side holds proxies for (received by reference and not released yet).</summary>
    public int ImportedReferenceCount => _references.ImportedCount;

    /// <summary>Sends the frame open on this thread (<paramref name="batched"/>: through
    /// <see cref="FrameChannel.CommitFrameBatched"/>); the references it exported stand.</summary>
    internal void SendOpenFrame(bool batched = false)
    {
        _references.KeepFrameExports();
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
        _references.RollBackFrameExports();
        Channel.AbortFrame();
    }

    /// <summary>
    /// Begins a frame that belongs to link <paramref name="link"/> (a reply, an error, a release about one of
    /// its objects): null, with nothing left open, when that link is gone, also when a reconnect replaced it
    /// while the frame was being begun.
    /// </summary>
    internal IBufferWriter<byte>? BeginFrameOnLink(in FrameHeader header, int link)
    {
        if (IsLinkLost(link))
        {
            return null;
        }
        IBufferWriter<byte> output = Channel.BeginFrame(header);
        if (Channel.LinkGeneration != link)
        {
            Channel.AbortFrame();
            return null;
        }
        return output;
    }

    /// <summary>Whether link <paramref name="link"/> is gone: lost, or replaced by a newer one.</summary>
    internal bool IsLinkLost(int link) => link <= _references.LostLink || link < Channel.LinkGeneration;

    /// <summary>
    /// The reader context (<see cref="XCall.Marshal.MarshalReader.Context"/>) for a payload that came over link
    /// <paramref name="link"/>: the connection itself while that link is the current one (always, without a
    /// reconnecting channel; custom marshallers find the connection there), else a <see cref="LinkScope"/>
    /// naming the old link, so references in the payload are taken as the old link's.
    /// </summary>
    internal object ReadContextOf(int link) => link == Channel.LinkGeneration ? this : ScopeOf(link);

    /// <summary>The reader context for payloads that came over link <paramref name="link"/> (one object per link, cached for the newest).</summary>
    private LinkScope ScopeOf(int link)
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
    internal ulong ExportObject(object target, Dispatcher dispatcher) =>
        _references.Export(target, dispatcher, Channel.LinkGeneration); // the frame that carries the id is open: its link is settled

    /// <summary>The object this side exposed under <paramref name="objectId"/> (a proxy coming home).</summary>
    internal object FindExported(ulong objectId) => _references.FindExported(objectId);

    /// <summary>The proxy for the peer's object <paramref name="objectId"/>: one per id while it lives.</summary>
    internal T ImportProxy<T>(ulong objectId, int link) where T : class => _references.Import<T>(objectId, link);

    /// <summary>Drops this side's reference to the peer's object behind <paramref name="proxy"/> and tells the peer.</summary>
    internal void Release(ProxyBase proxy)
    {
        if (proxy.Reference is { } reference && _references.TakeRelease(reference, generation: null, out int count))
        {
            SendRelease(reference, count);
        }
    }

    /// <summary>The proxy of <paramref name="generation"/> for <paramref name="reference"/> was collected.</summary>
    internal void ReleaseCollected(ImportedReference reference, int generation)
    {
        if (_references.TakeRelease(reference, generation, out int count))
        {
            SendRelease(reference, count);
        }
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
}
