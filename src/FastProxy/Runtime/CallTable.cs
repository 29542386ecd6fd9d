using XCall.Runtime.CompilerServices;
namespace XCall.Runtime;

/// <summary>
/// The calls a connection has sent and not finished: pooled <see cref="PendingCall"/>s, found by call id when
/// their reply arrives, and the connection's closed flag, which decides whether a call may still be rented.
/// </summary>
// Design:
// - A call id's low half is its slot; the slot array only grows (under _lock, published with a release store),
//   so FindCall reads it without a lock and checks the id it finds there: a slot reused in between holds a
//   call with another id and is not taken for the one looked for.
// - Slot 0 holds the spare call: a thread's back-to-back calls rent it with one interlocked exchange of an
//   int and return it with a release store (an interlocked exchange of an object field is a call into the
//   runtime, with a write barrier). Calls in flight at the same time take slots from the free list.
// - The free list is a stack of slots linked through PendingCall.NextFreeSlot; _freeHead packs the top slot + 1
//   (0: empty) in its low half and a tag in its high half that every push and pop increments, so a pop's
//   compare-exchange fails if the slot it read was popped and pushed again in between (no ABA). A push writes
//   the link before its compare-exchange (full fence) publishes it; a pop reads the link after the head it
//   read, and a stale link only fails its compare-exchange. One interlocked operation per rent and per return;
//   _lock only to make a new slot.
// - Closing: Rent publishes the call's id (PendingCall.Prepare) and then reads _closed; TryClose sets _closed
//   under _lock and then runs a process-wide barrier before its caller fails the calls it snapshots. So a call
//   is either refused by the renter (which reads _closed after its id is out) or failed by the closer (an
//   asymmetric Dekker pair: the rare side pays). No fence on the renter's side.
internal sealed class CallTable
{
    private readonly object _lock = new();
    private readonly PendingCall _spareCall;
    private readonly XCallConnection _connection;
    private PendingCall?[] _slots = new PendingCall?[16];
    private int _slotCount = 1;
    private int _spareCallTaken;
    private long _freeHead;
    private ulong _lastAsyncCallId;
    private int _closed;

    public CallTable(XCallConnection connection)
    {
        _connection = connection;
        _spareCall = new PendingCall(0, connection);
        _slots[0] = _spareCall;
    }

    /// <summary>True once <see cref="TryClose"/> ran: a call rented after it must be returned and refused.</summary>
    public bool IsClosed => Volatile.Read(ref _closed) != 0;

    /// <summary>A call for method <paramref name="methodId"/> with a new call id; check <see cref="IsClosed"/> after it.</summary>
    public PendingCall Rent(uint methodId, bool isAsync, bool longWait = false)
    {
        // A spare seen taken is not asked for (pipelined calls find it taken: no interlocked operation for nothing).
        PendingCall call = Volatile.Read(ref _spareCallTaken) == 0 && Interlocked.Exchange(ref _spareCallTaken, 1) == 0 ? _spareCall : RentSlot();
        call.Prepare(methodId, isAsync);
        call.LongWait = longWait;
        // A long wait is neither pipelined nor the call the next one is pipelined behind: it stays out while calls go on.
        if (isAsync && !longWait)
        {
            // Pipelined: the caller went on without awaiting the async call made just before this one, which is
            // still in flight (counting the calls in flight alone would also mark every call made while one long
            // call waits: a watch, a wait for an event; those would lose the caller's own poll for their reply).
            // No call has id 0. Threads racing here, and Find, which checks the id and then the state without a
            // lock, can only make the guess wrong (batch or poll), never the call.
            ulong previous = Volatile.Read(ref _lastAsyncCallId);
            Volatile.Write(ref _lastAsyncCallId, call.CallId);
            call.Pipelined = previous != 0 && Find(previous) is { IsCompleted: false };
        }
        else
        {
            call.Pipelined = false;
        }
        return call;
    }

    private PendingCall RentSlot()
    {
        PendingCall?[] slots = Volatile.Read(ref _slots);
        long head = Volatile.Read(ref _freeHead);
        while ((int)head != 0)
        {
            int slot = (int)head - 1; // pushed after its slot was published, so within any array read since
            if ((uint)slot >= (uint)slots.Length)
            {
                slots = Volatile.Read(ref _slots);
            }
            PendingCall call = slots[slot]!;
            long next = Retagged(head, call.NextFreeSlot);
            long seen = Interlocked.CompareExchange(ref _freeHead, next, head);
            if (seen == head)
            {
                return call;
            }
            head = seen;
        }
        return NewSlot();
    }

    /// <summary>The free-list head whose top is <paramref name="top"/> (a slot + 1, 0: empty), its tag one past <paramref name="head"/>'s.</summary>
    private static long Retagged(long head, int top) => (long)(((ulong)head & 0xFFFF_FFFF_0000_0000UL) + (1UL << 32)) | (uint)top;

    private PendingCall NewSlot()
    {
        lock (_lock)
        {
            int slot = _slotCount++;
            if (slot == _slots.Length)
            {
                PendingCall?[] grown = new PendingCall?[_slots.Length * 2];
                _slots.CopyTo(grown);
                Volatile.Write(ref _slots, grown);
            }
            var call = new PendingCall(slot, _connection);
            Volatile.Write(ref _slots[slot], call);
            return call;
        }
    }

    /// <summary>Gives a call back after its last use.</summary>
    public void Return(PendingCall call)
    {
        call.CallId = 0;
        call.LoanLink = null;
        if (ReferenceEquals(call, _spareCall))
        {
            Volatile.Write(ref _spareCallTaken, 0); // after the call's last use: the next renter sees it whole
            return;
        }
        long head = Volatile.Read(ref _freeHead);
        while (true)
        {
            call.NextFreeSlot = (int)head; // the slot below it + 1, or 0
            long next = Retagged(head, call.Slot + 1);
            long seen = Interlocked.CompareExchange(ref _freeHead, next, head);
            if (seen == head)
            {
                return;
            }
            head = seen;
        }
    }

    /// <summary>The call in flight with id <paramref name="callId"/>, if any (a reply's, or a nested call's parent).</summary>
    public PendingCall? Find(ulong callId)
    {
        int slot = (int)(uint)callId;
        PendingCall?[] slots = Volatile.Read(ref _slots);
        if ((uint)slot < (uint)slots.Length && slots[slot] is { } call && call.CallId == callId)
        {
            return call;
        }
        return null;
    }

    /// <summary>Every call object, to fail the ones in flight (a lost link).</summary>
    public PendingCall?[] Snapshot()
    {
        lock (_lock)
        {
            return _slots;
        }
    }

    /// <summary>Why the table was closed (null after an orderly close); set before <see cref="IsClosed"/> reads true.</summary>
    public Exception? CloseReason { get; private set; }

    /// <summary>Marks the table closed over <paramref name="reason"/>, once: true with every call object in
    /// <paramref name="slots"/>, to fail the ones in flight; false when it was closed already.</summary>
    public bool TryClose(Exception? reason, out PendingCall?[] slots)
    {
        lock (_lock)
        {
            if (_closed != 0)
            {
                slots = [];
                return false;
            }
            CloseReason = reason;
            Interlocked.Exchange(ref _closed, 1);
            slots = _slots;
        }
        // Every thread's call id published before it could see _closed is visible after this (see Design).
        Interlocked.MemoryBarrierProcessWide();
        return true;
    }
}
