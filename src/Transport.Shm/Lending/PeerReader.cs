using XCall.Marshal;
using XCall.Transport.Shm.Interop;

namespace XCall.Transport.Shm.Lending;

/// <summary>
/// The reader's side of cross-memory attach: copies a block the peer lent (see <see cref="LoanBook"/>) straight
/// from the peer's memory into ours with <c>process_vm_readv</c>. Each read holds the loan's slot (<see cref="LoanSlots"/>)
/// in the Reading state, so a lender that takes the loan back waits for it; a read of a loan already taken back
/// (its caller timed out, or the connection is ending) fails with <see cref="XCallDisconnectedException"/>, which
/// fails that call only.
/// </summary>
internal sealed unsafe class PeerReader(ShmSegment segment, ulong* slots, int peerPid, string endpoint, long maxBlockBytes) : IPeerMemory
{
    /// <inheritdoc/>
    public long MaxBlockBytes => maxBlockBytes;

    /// <inheritdoc/>
    public void Read(ulong address, ulong ticket, Span<byte> destination)
    {
        int slot = LoanSlots.SlotOf(ticket);
        if ((uint)slot >= LoanSlots.Count)
        {
            throw new XCallProtocolException($"A lent array names loan slot {slot}; there are {LoanSlots.Count}.");
        }
        // A call read on a pool thread may come after the connection ended: the mapping must outlive the read.
        if (!segment.TryAddRef())
        {
            throw new XCallDisconnectedException(endpoint, "the connection ended before the arrays the peer lent were read");
        }
        try
        {
            ulong lent = LoanSlots.Pack(LoanSlots.GenerationOf(ticket), LoanSlots.Lent);
            ulong reading = LoanSlots.Pack(LoanSlots.GenerationOf(ticket), LoanSlots.Reading);
            if (Interlocked.CompareExchange(ref slots[slot], reading, lent) != lent)
            {
                throw new XCallDisconnectedException(endpoint, "the caller took back the arrays it lent (its call timed out or was cancelled, or the connection is ending)");
            }
            try
            {
                Copy(address, destination);
            }
            finally
            {
                Volatile.Write(ref slots[slot], lent);
            }
        }
        finally
        {
            segment.ReleaseRef();
        }
    }

    private void Copy(ulong address, Span<byte> destination)
    {
        if (!ProcessMemory.TryRead(peerPid, address, destination, out int error))
        {
            if (error == ProcessMemory.NoSuchProcess)
            {
                throw new XCallDisconnectedException(endpoint, "the peer that lent the call's arrays is gone");
            }
            string why = error != 0 ? Libc.LastErrorText() : "a short read";
            throw new XCallProtocolException($"Cannot read the {destination.Length}-byte array the peer lent at 0x{address:x} ({why}).");
        }
    }
}
