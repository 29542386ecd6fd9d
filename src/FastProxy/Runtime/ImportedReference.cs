namespace XCall.Runtime;

/// <summary>This side's hold on one of the peer's objects, shared by the proxies of that object (see <see cref="ReferenceTable"/>).</summary>
internal sealed class ImportedReference(ulong objectId, int link)
{
    public ulong ObjectId { get; } = objectId;

    /// <summary>The <see cref="Transport.FrameChannel.LinkGeneration"/> the reference came over.</summary>
    public int Link { get; } = link;

    public WeakReference<object> Proxy { get; } = new(null!);

    /// <summary>How many times the peer sent it: what the Release frame gives back.</summary>
    public int Received { get; set; }

    /// <summary>Counts the proxies made for it: a collected proxy's release is for its own generation only.</summary>
    public int Generation { get; set; }

    public bool Released { get; set; }
}
