namespace XCall.Marshal;

/// <summary>
/// A transport that can let its peer copy a large array straight out of this process's memory (on Linux,
/// <c>process_vm_readv</c>), so the array's bytes cross once instead of twice (into transport memory, then out).
/// <see cref="MarshalWriter.WriteArray{T}"/> asks the buffer writer it writes into, when that writer implements
/// this interface; the peer reads the block through its <see cref="IPeerMemory"/>.
/// </summary>
public interface IBlockLender
{
    /// <summary>The smallest block, in bytes, worth lending; smaller arrays are copied into the message.</summary>
    int MinimumLendBytes { get; }

    /// <summary>
    /// Pins <paramref name="array"/> (<paramref name="byteLength"/> bytes of elements) until the peer can no longer
    /// read it (the reply to the call being written, or the caller giving up on it) and returns the address of its
    /// first element and the loan's ticket (which the reader hands back to its <see cref="IPeerMemory"/>); false
    /// when the message being written cannot lend (the connection lends nothing, no caller waits for this
    /// message's reply, or too many calls have loans out).
    /// </summary>
    bool TryLend(Array array, long byteLength, out ulong address, out ulong ticket);
}

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
