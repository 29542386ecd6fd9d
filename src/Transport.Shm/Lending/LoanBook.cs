using System.Runtime.InteropServices;
using XCall.Transport.Shm.Interop;

namespace XCall.Transport.Shm.Lending;

/// <summary>
/// The lender's side of cross-memory attach: the arrays this side pinned for the peer to read (see
/// <see cref="Marshal.IBlockLender"/>), by the call whose frame carries them, each call with a slot of
/// <see cref="LoanSlots"/>. A call's loans end when its reply or error arrives (the peer reads a call's arguments
/// before it answers), or when its caller stops waiting (a timeout, a cancellation, the end of the connection):
/// then the slot is taken back, waiting for a read in progress, so the peer cannot read the array once the caller
/// has it back.
/// </summary>
/// <remarks>
/// Threads: <see cref="TryLend"/>, <see cref="Seal"/> and <see cref="DiscardOpen"/> run under the channel's send
/// lock (one frame is written at a time); <see cref="Release"/> on the receiving thread, <see cref="Revoke"/> on a
/// caller's; the table of sealed calls and the free slots are under their own lock.
/// </remarks>
internal sealed unsafe class LoanBook
{
    // How long a take-back waits for a peer in the middle of a read; past it the arrays stay pinned for the life of
    // the process rather than be freed under a read.
    private static readonly TimeSpan s_revokeWait = TimeSpan.FromSeconds(1);

    private readonly ShmSegment _segment;
    private readonly ulong* _slots;
    private readonly int _peerPid;
    private readonly string _endpoint;
    private readonly uint[] _generations = new uint[LoanSlots.Count];
    private readonly Stack<int> _freeSlots = new(Enumerable.Range(0, LoanSlots.Count).Reverse());
    private readonly List<GCHandle> _open = [];
    private readonly Dictionary<ulong, (int Slot, GCHandle[] Handles)> _sealed = [];
    private int _openSlot = -1;
    private int _sealedCount;
    private bool _revoked;

    public LoanBook(ShmSegment segment, ulong* slots, int peerPid, int minimumBytes, string endpoint)
    {
        _segment = segment;
        _slots = slots;
        _peerPid = peerPid;
        _endpoint = endpoint;
        MinimumBytes = minimumBytes;
    }

    /// <summary>Arrays below this many bytes are not worth a loan (<see cref="ShmOptions.LendThreshold"/>).</summary>
    public int MinimumBytes { get; }

    /// <summary>True while some call's loans wait for its reply (a cheap check on every reply).</summary>
    public bool HasSealed => Volatile.Read(ref _sealedCount) != 0;

    /// <summary>Bytes lent since the connection began (for tests and diagnostics).</summary>
    public long LentBytes { get; private set; }

    /// <summary>
    /// Pins <paramref name="array"/> for the frame being written: its first element's address and the frame's ticket.
    /// False when every slot is taken (calls with loans waiting for replies): the array is then copied.
    /// </summary>
    public bool TryLend(Array array, long byteLength, out ulong address, out ulong ticket)
    {
        if (_openSlot < 0)
        {
            lock (_sealed)
            {
                if (_revoked || !_freeSlots.TryPop(out _openSlot))
                {
                    _openSlot = -1;
                    address = ticket = 0;
                    return false;
                }
            }
            Volatile.Write(ref _slots[_openSlot], LoanSlots.Pack(_generations[_openSlot], LoanSlots.Lent));
        }
        GCHandle handle = GCHandle.Alloc(array, GCHandleType.Pinned);
        _open.Add(handle);
        LentBytes += byteLength;
        LendingMetrics.RecordLent(_endpoint, byteLength);
        address = (ulong)handle.AddrOfPinnedObject();
        ticket = LoanSlots.Ticket(_openSlot, _generations[_openSlot]);
        return true;
    }

    /// <summary>The frame being written is about to be published: its loans now belong to call <paramref name="callId"/>.</summary>
    public void Seal(ulong callId)
    {
        if (_openSlot < 0)
        {
            return;
        }
        var entry = (_openSlot, _open.ToArray());
        _open.Clear();
        _openSlot = -1;
        lock (_sealed)
        {
            _sealed[callId] = entry;
            _sealedCount = _sealed.Count;
        }
    }

    /// <summary>The frame being written was dropped unpublished (or its reader discards it unread): its loans end now.</summary>
    public void DiscardOpen()
    {
        if (_openSlot < 0)
        {
            return;
        }
        GCHandle[] handles = [.. _open];
        _open.Clear();
        int slot = _openSlot;
        _openSlot = -1;
        lock (_sealed)
        {
            Recycle(slot, handles);
        }
    }

    /// <summary>Call <paramref name="callId"/>'s reply or error arrived: the peer is done with its arguments.</summary>
    public void Release(ulong callId)
    {
        lock (_sealed)
        {
            if (_sealed.Remove(callId, out var entry))
            {
                _sealedCount = _sealed.Count;
                Recycle(entry.Slot, entry.Handles);
            }
        }
    }

    /// <summary>
    /// Call <paramref name="callId"/>'s caller stops waiting without its reply: takes its loans back before the
    /// caller gets its arrays back (a read in progress finishes first; none starts after).
    /// </summary>
    public void Revoke(ulong callId)
    {
        (int Slot, GCHandle[] Handles) entry;
        lock (_sealed)
        {
            if (!_sealed.Remove(callId, out entry))
            {
                return;
            }
            _sealedCount = _sealed.Count;
        }
        // A caller's thread, outside the send lock: the connection may be ending under it, and its slots with it.
        if (!_segment.TryAddRef())
        {
            return; // unmapped on this side while the peer may still read: the arrays stay pinned
        }
        try
        {
            TakeBack(entry.Slot, entry.Handles);
        }
        finally
        {
            _segment.ReleaseRef();
        }
    }

    /// <summary>The connection ends: takes back every call's loans (no frame is open: the send lock is held).</summary>
    public void RevokeAll()
    {
        List<(int Slot, GCHandle[] Handles)> entries;
        lock (_sealed)
        {
            _revoked = true;
            entries = [.. _sealed.Values];
            _sealed.Clear();
            _sealedCount = 0;
        }
        foreach ((int slot, GCHandle[] handles) in entries)
        {
            TakeBack(slot, handles);
        }
    }

    private void TakeBack(int slot, GCHandle[] handles)
    {
        ulong lent = LoanSlots.Pack(_generations[slot], LoanSlots.Lent);
        ulong revoked = LoanSlots.Pack(_generations[slot], LoanSlots.Revoked);
        long deadline = Environment.TickCount64 + (long)s_revokeWait.TotalMilliseconds;
        var spinner = new SpinWait();
        // Lent -> Revoked; while the peer reads (Reading), wait for it to put Lent back.
        while (Interlocked.CompareExchange(ref _slots[slot], revoked, lent) != lent)
        {
            if (Volatile.Read(ref _slots[slot]) != LoanSlots.Pack(_generations[slot], LoanSlots.Reading) || !Libc.IsProcessAlive(_peerPid))
            {
                break; // not ours any more (a peer that wrote nonsense), or a dead reader: nothing reads
            }
            if (Environment.TickCount64 >= deadline)
            {
                return; // left pinned, and the slot with them: a leak, not a read of freed memory
            }
            spinner.SpinOnce(sleep1Threshold: 20);
        }
        lock (_sealed)
        {
            Recycle(slot, handles);
        }
    }

    /// <summary>Unpins and frees the slot for a new generation (a late read of the old ticket fails). Under the lock.</summary>
    private void Recycle(int slot, GCHandle[] handles)
    {
        foreach (GCHandle handle in handles)
        {
            handle.Free();
        }
        _generations[slot]++;
        Volatile.Write(ref _slots[slot], LoanSlots.Free);
        _freeSlots.Push(slot);
    }
}
