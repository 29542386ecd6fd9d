namespace XCall.Marshal;

/// <summary>
/// The peer's memory as a reader of a message sees it: where a message holds a lent block (see
/// <see cref="IBlockLender"/>) instead of the bytes, <see cref="MarshalReader.ReadArray{T}"/> copies them from here.
/// </summary>
public interface IPeerMemory
{
    /// <summary>
    /// The largest lent block the reader accepts, in bytes (a transport bounds it as it bounds a frame: a lent
    /// block costs its sender a few bytes of message, so it must not make the reader allocate more than a frame).
    /// </summary>
    long MaxBlockBytes { get; }

    /// <summary>
    /// Copies <c>destination.Length</c> bytes at <paramref name="address"/> in the peer, lent under
    /// <paramref name="ticket"/>, into <paramref name="destination"/>. Raises <see cref="XCallProtocolException"/>
    /// when the peer's memory there cannot be read, and a disconnect (which fails the call, not the connection)
    /// when the peer took the loan back (its caller gave up) or is gone.
    /// </summary>
    void Read(ulong address, ulong ticket, Span<byte> destination);
}
