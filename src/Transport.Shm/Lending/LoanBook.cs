using System.Runtime.InteropServices;
using XCall.Transport.Shm.Interop;
using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm.Lending;

/// <summary>
/// The lender's side of cross-memory attach: the arrays this side pinned for the peer to read (see
/// <see cref="Marshal.IBlockLender"/>), by the call whose frame carries them. A call's arrays stay pinned until
/// its reply or error arrives (the peer reads a call's arguments before it answers), whether or not the caller
/// still waits; what is left when the connection ends is freed only once the peer can no longer be reading it
/// (<see cref="RevokeAll"/>).
/// </summary>
/// <remarks>
/// Threads: <see cref="Lend"/>, <see cref="Seal"/> and <see cref="DiscardOpen"/> run under the channel's send
/// lock (one frame is written at a time); <see cref="Release"/> runs on the receiving thread; the sealed table
/// is under its own lock.
/// </remarks>
internal sealed unsafe class LoanBook(ShmRing outgoing, int peerPid, int minimumBytes, string endpoint)
{
    // How long the end of a connection waits for a peer that is reading a loan; past it the arrays stay pinned
    // for the life of the process rather than be freed under a read.
    private static readonly TimeSpan s_revokeWait = TimeSpan.FromSeconds(1);

    private readonly List<GCHandle> _open = [];
    private readonly Dictionary<ulong, GCHandle[]> _sealed = [];
    private int _sealedCount;
    private bool _revoked;

    /// <summary>Arrays below this many bytes are not worth a loan (<see cref="ShmOptions.LendThreshold"/>).</summary>
    public int MinimumBytes => minimumBytes;

    /// <summary>True while some call's loans wait for its reply (a cheap check on every reply).</summary>
    public bool HasSealed => Volatile.Read(ref _sealedCount) != 0;

    /// <summary>Bytes lent since the connection began (for tests and diagnostics).</summary>
    public long LentBytes { get; private set; }

    /// <summary>Pins <paramref name="array"/> for the frame being written and returns its first element's address.</summary>
    public ulong Lend(Array array, long byteLength)
    {
        GCHandle handle = GCHandle.Alloc(array, GCHandleType.Pinned);
        _open.Add(handle);
        LentBytes += byteLength;
        Diagnostics.XCallMetrics.RecordLent(endpoint, byteLength);
        return (ulong)handle.AddrOfPinnedObject();
    }

    /// <summary>The frame being written is about to be published: its loans now wait for call <paramref name="callId"/>'s reply.</summary>
    public void Seal(ulong callId)
    {
        if (_open.Count == 0)
        {
            return;
        }
        GCHandle[] handles = [.. _open];
        _open.Clear();
        lock (_sealed)
        {
            if (_revoked)
            {
                return; // the connection ended under the writer: they stay pinned, as nobody can tell whether the peer reads them
            }
            _sealed[callId] = handles;
            _sealedCount = _sealed.Count;
        }
    }

    /// <summary>The frame being written was dropped unpublished (or its reader discards it unread): its loans end now.</summary>
    public void DiscardOpen()
    {
        foreach (GCHandle handle in _open)
        {
            handle.Free();
        }
        _open.Clear();
    }

    /// <summary>Call <paramref name="callId"/>'s reply or error arrived: the peer has read its arguments.</summary>
    public void Release(ulong callId)
    {
        GCHandle[]? handles;
        lock (_sealed)
        {
            if (!_sealed.Remove(callId, out handles))
            {
                return;
            }
            _sealedCount = _sealed.Count;
        }
        foreach (GCHandle handle in handles)
        {
            handle.Free();
        }
    }

    /// <summary>
    /// The connection ends: marks every loan taken back in shared memory, then waits for a peer in the middle of
    /// a read to finish it (or to be dead) before the arrays are unpinned. If the peer goes on reading past
    /// <see cref="s_revokeWait"/>, the arrays stay pinned: a leak, not a read of freed memory.
    /// </summary>
    public void RevokeAll()
    {
        List<GCHandle> handles;
        lock (_sealed)
        {
            if (_revoked)
            {
                return;
            }
            _revoked = true;
            handles = [.. _sealed.Values.SelectMany(static h => h)];
            _sealed.Clear();
            _sealedCount = 0;
        }
        if (handles.Count == 0)
        {
            return;
        }
        // Dekker with the reader (PeerReader.Read): we store the flag then load the reader count, it adds itself
        // then loads the flag, each with a full fence between; one of us sees the other.
        Volatile.Write(ref *outgoing.LoansRevoked, 1);
        Interlocked.MemoryBarrier();
        long deadline = Environment.TickCount64 + (long)s_revokeWait.TotalMilliseconds;
        var spinner = new SpinWait();
        while (Volatile.Read(ref *outgoing.LoanReaders) != 0)
        {
            if (!Libc.IsProcessAlive(peerPid))
            {
                break;
            }
            if (Environment.TickCount64 >= deadline)
            {
                return; // left pinned: a leak, not a read of freed memory
            }
            spinner.SpinOnce(sleep1Threshold: 20);
        }
        foreach (GCHandle handle in handles)
        {
            handle.Free();
        }
    }
}
