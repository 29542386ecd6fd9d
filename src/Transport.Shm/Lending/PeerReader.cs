using XCall.Marshal;
using XCall.Transport.Shm.Interop;
using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm.Lending;

/// <summary>
/// The reader's side of cross-memory attach: copies a block the peer lent (see <see cref="LoanBook"/>) straight
/// from the peer's memory into ours with one <c>process_vm_readv</c>. Each read is announced in the incoming
/// ring's control block, so a peer that ends the connection waits for it before it unpins the block, and a read
/// that starts after the peer took its loans back fails instead of reading freed memory.
/// </summary>
internal sealed unsafe class PeerReader(ShmSegment segment, ShmRing incoming, int peerPid, string endpoint, long maxBlockBytes) : IPeerMemory
{
    /// <inheritdoc/>
    public long MaxBlockBytes => maxBlockBytes;

    /// <inheritdoc/>
    public void Read(ulong address, Span<byte> destination)
    {
        // A call read on a pool thread may come after the connection ended: the mapping must outlive the read.
        if (!segment.TryAddRef())
        {
            throw new XCallDisconnectedException(endpoint, "the connection ended before the arrays the peer lent were read");
        }
        try
        {
            ReadHeld(address, destination);
        }
        finally
        {
            segment.ReleaseRef();
        }
    }

    private void ReadHeld(ulong address, Span<byte> destination)
    {
        Interlocked.Increment(ref *incoming.LoanReaders);
        try
        {
            if (Volatile.Read(ref *incoming.LoansRevoked) != 0)
            {
                throw new XCallDisconnectedException(endpoint, "the peer took back the arrays it lent (it is closing the connection)");
            }
            long read = Libc.ReadProcessMemory(peerPid, address, destination);
            if (read != destination.Length)
            {
                string why = read < 0 ? Libc.LastErrorText() : $"{read} of {destination.Length} bytes";
                throw new XCallProtocolException($"Cannot read the {destination.Length}-byte array the peer lent at 0x{address:x} ({why}).");
            }
        }
        finally
        {
            Interlocked.Decrement(ref *incoming.LoanReaders);
        }
    }
}
