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
