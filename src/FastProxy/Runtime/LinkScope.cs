namespace XCall.Runtime;

/// <summary>
/// The context of a reader of a payload that came over one link (<see cref="XCall.Marshal.MarshalReader.Context"/>):
/// references in it belong to that link.
/// </summary>
internal sealed class LinkScope(XCallConnection connection, int link)
{
    public XCallConnection Connection { get; } = connection;

    /// <summary>The <see cref="Transport.FrameChannel.LinkGeneration"/> the payload came over.</summary>
    public int Link { get; } = link;
}
