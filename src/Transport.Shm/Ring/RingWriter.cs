using System.Buffers;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using XCall.Marshal;

namespace XCall.Transport.Shm.Ring;

// Design: the producer half of a single-producer / single-consumer ring in shared memory. Only this object
// (under the channel's send lock) writes records, the producer position and the cached consumer position;
// the consumer writes only the consumer position. A record is {int32 length, int32 type, bytes}, aligned
// to a cache line (RingLayout.Alignment), never crossing the end of the data area (a Padding record fills
// the rest of a lap). A record becomes visible when its length word turns non-zero: the length is written
// last, with an interlocked exchange (a release store and a full fence, which the wake-up check after it needs).
//
// Reachability invariant: the reader only ever looks at the length word at its position, and it reaches a
// position only by stepping over a published record. So before publishing a record, the producer writes
// the header that follows it: a real one (for the records of the same frame), or a zero "terminator".
// Stale bytes of earlier laps are therefore never read as a record. To always have room for that
// terminator, the producer keeps one alignment unit between its writes and the consumer's position + capacity: the
// limit is then aligned itself, so the aligned end of any record written up to it leaves the terminator's 8 bytes.
//
// A frame is written in place: FrameStart {header, total length, reserved} and, when the frame does not fit
// contiguously, FrameChunk records. Nothing is visible until the commit publishes the FrameStart length,
// after every later record (their lengths can be plain stores: the reader cannot pass the FrameStart).
// When a frame fills the whole ring before its commit (the reader has consumed everything before it), the
// writer switches to streaming: it publishes FrameStart with total -1, then each chunk as it is filled, and
// ends with FrameEnd (or FrameAbort). The reader gathers a streamed frame before handing it on.
//
// Held batches (one-way frames, Commit(hold: true)): the first small one-record frame of a batch is published with its
// length negated (the "held head"; interlocked, so the wake-up check after it is as for any frame); the frames after it
// get their real lengths through plain release stores, and are reachable only through the head. The reader leaves a
// held head alone for a short while (RingReader.HeldClaimDelay) instead of chasing each frame's cache line as it is
// written; the batch is published by turning the head's length positive (interlocked): at MaxHeldFrames frames, with
// the next frame that is not held, before any wait for room, any streamed frame, padding or control record, and at once
// when the reader sleeps. A reader that waited long enough takes the held head itself (a lone one-way call arrives all
// the same) and says so in the ClaimedHead word (head + 1) with a full fence before it reads on; the writer reads that
// word after each frame it adds.
// - Writer sees the claim: the batch is over; a full fence follows the frame's release store, then the wake-up check,
//   as for any published frame.
// - Writer does not see it (the claim came after its read, or its release store and the read passed each other, which
//   a store-to-load reorder allows): the frame needs no wake-up check. The reader either reads it while it polls, or,
//   when it went to sleep without it, wakes within RingSignal.HeldMissBoundMs (the reader bounds the next sleep after
//   every claim) and then sees it: the store is long visible by then. The writer's next held frame reads the claim and
//   ends the batch with a wake-up check, and every later frame is published as any other.
// A head published after the reader took it writes only a word the reader has passed and the writer has not reused: the
// writer writes no further than its cached consumer position + capacity, and once that cache moves past the head
// (RefreshConsumer) the batch is over and the head is never written again.
internal sealed unsafe class RingWriter : IBufferWriter<byte>, IBlockLender
{
    // The first record always gets room for its prefix and this many payload bytes, so the GetSpan(sizeHint)
    // promise of the frame channel (at least sizeHint bytes for sizeHint <= 64) holds from the first call.
    private const int MinContiguous = 64;
    private const int FirstRecordReserve = RingLayout.FirstPayloadOffset + MinContiguous;
    private const int TerminatorReserve = RingLayout.Alignment; // keeps _limit aligned (see the design notes)

    /// <summary>The most frames a held batch takes before it is published.</summary>
    public const int MaxHeldFrames = 32;

    private readonly ShmRing _ring;
    private readonly RingSignal _signal;
    private readonly byte* _data;
    private readonly long _mask;
    private readonly int _capacity;
    private readonly int _maxHint;
    private readonly RingMemory _memory;

    private long _tail;         // where the next frame starts (no frame open)
    private long _limit;        // writes end at or before this: cached consumer + capacity - terminator
    private long _frameStart;   // the FrameStart record of the open frame
    private long _recordStart;  // the open record (FrameStart or FrameChunk)
    private long _writePos;     // next payload byte
    private long _lapEnd;       // end of the data area for the open record
    private int _firstLength;   // FrameStart's length once closed (in-place frames)
    private long _frameBytes;   // payload bytes in the frame's closed records
    private int _spanLength;
    private bool _open;
    private bool _streaming;
    private bool _mayLend;      // the open frame is a call whose caller waits for the reply (FrameFlags.CallerWaits)
    private ulong _callId;      // the open frame's call id
    private readonly int _maxHeldRecord; // the largest record a held batch takes (a small one-way call)
    private long _heldStart = -1; // the open held batch's head, whose length word holds minus _heldLength; -1: none
    private int _heldLength;
    private int _heldCount;

    public RingWriter(ShmRing ring, RingSignal signal)
    {
        _ring = ring;
        _signal = signal;
        _data = ring.Data;
        _capacity = ring.Capacity;
        _mask = ring.Capacity - 1;
        _maxHint = ring.Capacity / 4;
        _tail = Volatile.Read(ref *ring.ProducerPosition);
        _memory = new RingMemory();
        _maxHeldRecord = Math.Min(1024, ring.Capacity / (4 * MaxHeldFrames));
        RefreshLimit(0);
    }

    /// <summary>
    /// The <see cref="Environment.TickCount64"/> by which the next frame must be out (0: none), set before
    /// <see cref="BeginFrame"/>: every wait for room of that frame ends there with <see cref="XCallTimeoutException"/>.
    /// </summary>
    public long Deadline { get; set; }

    /// <summary>The peer's address, for the timeout's message.</summary>
    public string Endpoint { get; set; } = "shm://";

    /// <summary>
    /// Set when a deadline passed while part of the open frame was already published (streaming): the reader
    /// holds a frame that will never end, so the ring is unusable and the channel must stop.
    /// </summary>
    public bool Broken { get; private set; }

    /// <summary>Forgets the open frame without writing anything (the channel stops, the ring goes with it).</summary>
    public void Drop()
    {
        _open = false;
        Loans?.DiscardOpen(); // never published whole, so never parsed
    }

    /// <summary>True between <see cref="BeginFrame"/> and <see cref="Commit"/> / <see cref="Abort"/>.</summary>
    public bool IsFrameOpen => _open;

    /// <summary>True once the open frame streams (its start is visible to the reader).</summary>
    public bool IsStreaming => _streaming;

    /// <summary>End of the published records.</summary>
    public long Tail => _tail;

    /// <summary>The arrays this side lends its peer; null when the peer cannot read our memory (or lending is off).</summary>
    public Lending.LoanBook? Loans { get; init; }

    /// <inheritdoc/>
    public int MinimumLendBytes => Loans?.MinimumBytes ?? int.MaxValue;

    /// <inheritdoc/>
    public bool TryLend(Array array, long byteLength, out ulong address, out ulong ticket)
    {
        // Only a call whose caller waits for its reply lends: the caller cannot change the array before the reply
        // (which comes after the peer read it) or before it took the loan back (LoanBook.Revoke).
        if (_open && _mayLend && Loans is { } loans)
        {
            return loans.TryLend(array, byteLength, out address, out ticket);
        }
        address = ticket = 0;
        return false;
    }

    // ---------------------------------------------------------------- frames

    /// <summary>Opens a frame and writes its header; waits for room if the ring is full.</summary>
    public void BeginFrame(in FrameHeader header)
    {
        Debug.Assert(!_open);
        long p = _tail;
        if ((p & _mask) + FirstRecordReserve > _capacity)
        {
            // Not enough room before the end of the data area: pad to the end and start the frame at the
            // next lap. The padding is published at once, with the (still zero) FrameStart length as its
            // terminator.
            long lapEnd = LapEnd(p);
            PublishHeldAndWake();
            WaitForSpace(lapEnd + FirstRecordReserve);
            SetType(p, RecordType.Padding);
            *LengthAt(lapEnd) = 0;
            Publish(p, (int)(lapEnd - p));
            // A reader asleep on the ring must consume the padding before this frame can have the room
            // behind it: a frame larger than what is left would otherwise wait for a reader that waits for it.
            // So the padding is woken for as the frame after it will be: not at all when the consumer's callers
            // mark the ring and poll for that frame (see ShmChannel.Receive.cs). Whoever is to read the frame then
            // reads the padding first: a caller that polls, one that lets go to run a nested call and polls again, or
            // one that stops polling while it still owes an answer, which re-arms the ring and drains what is there.
            // Woken unconditionally, the padding would wake the sleeping receive thread for nothing once a lap.
            _signal.WakeConsumerIfSleeping(long.MaxValue, RingSignal.IsPolledFor(header));
            p = lapEnd;
            _tail = p;
        }
        else if (p + FirstRecordReserve > _limit)
        {
            WaitForSpace(p + FirstRecordReserve);
        }
        _frameStart = p;
        _recordStart = p;
        _lapEnd = LapEnd(p);
        FrameHeaderCodec.Write(At(p) + RingLayout.RecordHeaderLength, header);
        _writePos = p + RingLayout.FirstPayloadOffset;
        _frameBytes = 0;
        _streaming = false;
        _mayLend = header.Kind == FrameKind.Call && (header.Flags & FrameFlags.CallerWaits) != 0;
        _callId = header.CallId;
        _open = true;
    }

    /// <summary>The largest payload <see cref="TryHoldWhole"/> takes: what the first record always has room for (and
    /// no more than <see cref="SmallCopy"/> copies inline).</summary>
    public const int MaxWholePayload = MinContiguous <= SmallCopy.MaxLength ? MinContiguous : SmallCopy.MaxLength;

    /// <summary>
    /// Writes a one-way frame whose payload is all at hand (at most <see cref="MaxWholePayload"/> bytes) into the held
    /// batch in one step, as <see cref="BeginFrame"/>, the payload's copy and <see cref="Commit"/> with hold would: false,
    /// with nothing written, when BeginFrame would refresh the room it last saw (and maybe wait) or pad to the next lap, or
    /// when the frame is larger than a held record (the caller then takes that way). <paramref name="check"/> is
    /// <see cref="Commit"/>'s answer.
    /// </summary>
    public bool TryHoldWhole(in FrameHeader header, ReadOnlySpan<byte> payload, out bool check)
    {
        Debug.Assert(!_open);
        long p = _tail;
        int length = RingLayout.FirstPayloadOffset + payload.Length;
        // The two room checks of BeginFrame: with them passed, the first record has room for MaxWholePayload bytes and
        // the terminator after it.
        if ((uint)payload.Length > MaxWholePayload || length > _maxHeldRecord || (p & _mask) + FirstRecordReserve > _capacity
            || p + FirstRecordReserve > _limit)
        {
            check = false;
            return false;
        }
        byte* record = At(p);
        FrameHeaderCodec.Write(record + RingLayout.RecordHeaderLength, header);
        *(int*)(record + RingLayout.TotalLengthOffset) = payload.Length;
        *(int*)(record + RingLayout.TotalLengthOffset + 4) = 0;
        SmallCopy.Copy(payload, new Span<byte>(record + RingLayout.FirstPayloadOffset, payload.Length));
        SetType(p, RecordType.FrameStart);
        long next = RingLayout.Align(p + length);
        *LengthAt(next) = 0;
        _frameStart = p;
        check = HoldAndMoveOn(length, next);
        return true;
    }

    /// <summary>Puts the one-record frame at <see cref="_frameStart"/>, written up to its terminator at <paramref name="next"/>
    /// but for its length, into the held batch (<see cref="Hold"/>'s answer), and moves the tail past it.</summary>
    private bool HoldAndMoveOn(int length, long next)
    {
        bool check = Hold(length);
        _tail = next;
        Volatile.Write(ref *_ring.ProducerPosition, next);
        return check;
    }

    /// <summary>The ring's data bytes.</summary>
    public int Capacity => _capacity;

    /// <summary>The bytes a frame could take now without a look at the consumer's position: at most what is free (the
    /// consumer may have moved on since). Read from any thread, as a hint.</summary>
    public long RoomLastSeen => Volatile.Read(ref _limit) - Volatile.Read(ref _tail);

    /// <summary>The bytes free now, from the consumer's position (a read of the line the consumer writes). Read from any
    /// thread, as a hint.</summary>
    public long Room => LimitAt(Volatile.Read(ref *_ring.ConsumerPosition)) - Volatile.Read(ref _tail);

    /// <summary>Where writes end while the consumer is at <paramref name="consumer"/> (the terminator's unit kept back).</summary>
    private long LimitAt(long consumer) => consumer + _capacity - TerminatorReserve;

    /// <summary>True while a held batch waits to be published (<see cref="PublishHeld"/>).</summary>
    public bool HoldsBatch => _heldStart >= 0;

    /// <summary>
    /// Publishes the open frame; with <paramref name="hold"/> (a one-way frame), a small one-record frame goes into the held
    /// batch instead (see the design notes). Returns false when the frame went into an open batch that the reader has not
    /// taken (it needs no wake-up check); otherwise the caller checks whether the reader needs a wake-up
    /// (<see cref="RingSignal.ClaimConsumerWake"/>) and, when it does, publishes a held batch before waking it
    /// (<see cref="PublishHeld"/>).
    /// </summary>
    public bool Commit(bool hold = false)
    {
        Debug.Assert(_open);
        // Before the frame is out: its reply, which ends the loans, may come at once.
        Loans?.Seal(_callId);
        long next;
        if (_streaming)
        {
            try
            {
                EnsureRecordEnd();
            }
            catch
            {
                _open = false; // the channel stopped; the frame is lost with it
                throw;
            }
            next = PublishOpenRecord(RecordType.FrameEnd);
        }
        else
        {
            byte* first = At(_frameStart);
            int firstLength;
            if (_recordStart == _frameStart)
            {
                // The common case: one record.
                firstLength = (int)(_writePos - _frameStart);
                *(int*)(first + RingLayout.TotalLengthOffset) = firstLength - RingLayout.FirstPayloadOffset;
                next = RingLayout.Align(_writePos);
            }
            else
            {
                next = CloseChunkUnpublished();
                firstLength = _firstLength;
                *(int*)(first + RingLayout.TotalLengthOffset) = checked((int)_frameBytes);
            }
            *(int*)(first + RingLayout.TotalLengthOffset + 4) = 0;
            SetType(_frameStart, RecordType.FrameStart);
            *LengthAt(next) = 0;
            if (hold && _recordStart == _frameStart && firstLength <= _maxHeldRecord)
            {
                _open = false;
                return HoldAndMoveOn(firstLength, next);
            }
            Publish(_frameStart, firstLength);
        }
        PublishHeld(); // after this frame: reachable from the head, it goes out with the batch
        _tail = next;
        Volatile.Write(ref *_ring.ProducerPosition, next);
        _open = false;
        return true;
    }

    /// <summary>Puts the frame at <see cref="_frameStart"/> (written but for its length) into the held batch.</summary>
    private bool Hold(int length)
    {
        if (_heldStart < 0)
        {
            Publish(_frameStart, -length); // the held head: visible, with the full fence the wake-up check needs
            _heldStart = _frameStart;
            _heldLength = length;
            _heldCount = 1;
            return true;
        }
        Volatile.Write(ref *LengthAt(_frameStart), length); // the frame's bytes before its length; no fence (see the design notes)
        if (Volatile.Read(ref *_ring.ClaimedHead) == _heldStart + 1)
        {
            _heldStart = -1; // the reader took the head: the batch is out, and this frame with it
            Interlocked.MemoryBarrier(); // the frame is visible before the wake-up check reads the reader's sleeping word
            return true;
        }
        if (++_heldCount >= MaxHeldFrames)
        {
            PublishHeld();
            return true;
        }
        return false;
    }

    /// <summary>Publishes the held batch, if any (its head's length turns positive, through a full fence). The caller
    /// checks for a wake-up as after <see cref="Commit"/>.</summary>
    public void PublishHeld()
    {
        if (_heldStart >= 0)
        {
            Publish(_heldStart, _heldLength);
            _heldStart = -1;
        }
    }

    /// <summary>Publishes the held batch, if any, and wakes the reader if it sleeps: before this side waits for room or
    /// publishes what the reader must read before the batch could be published.</summary>
    private void PublishHeldAndWake()
    {
        if (_heldStart >= 0)
        {
            PublishHeld();
            _signal.WakeConsumerIfSleeping();
        }
    }

    /// <summary>
    /// Drops the open frame. Nothing published yet: the ring is left as it was. Streaming: an abort record
    /// ends the frame and the reader discards what it gathered. Returns true when the reader must be woken.
    /// </summary>
    public bool Abort()
    {
        Debug.Assert(_open);
        _open = false;
        Loans?.DiscardOpen(); // the reader drops an aborted frame unparsed, even a streamed one it partly gathered
        if (!_streaming)
        {
            // The FrameStart length word was never written: it is still the zero terminator of the last
            // published record, so the reader sees nothing.
            _tail = _frameStart;
            return false;
        }
        _writePos = _recordStart + RingLayout.RecordHeaderLength;
        try
        {
            EnsureRecordEnd();
        }
        catch (XCallTimeoutException)
        {
            Broken = true; // part of the frame is out and its abort record cannot follow: the ring is done
            throw;
        }
        _tail = PublishOpenRecord(RecordType.FrameAbort);
        Volatile.Write(ref *_ring.ProducerPosition, _tail);
        return true;
    }

    /// <summary>Publishes a record without payload (e.g. <see cref="RecordType.Goodbye"/>) if there is room
    /// now; false when the ring is full.</summary>
    public bool TryWriteControl(RecordType type)
    {
        Debug.Assert(!_open);
        PublishHeldAndWake();
        long p = _tail;
        long end = RingLayout.Align(p + RingLayout.RecordHeaderLength); // where the reader looks next
        if (end > _limit && !RefreshLimit(end))
        {
            return false;
        }
        SetType(p, type);
        *LengthAt(end) = 0;
        Publish(p, RingLayout.RecordHeaderLength);
        _tail = end;
        Volatile.Write(ref *_ring.ProducerPosition, end);
        return true;
    }

    // ---------------------------------------------------------------- IBufferWriter<byte>

    /// <inheritdoc/>
    public void Advance(int count)
    {
        if ((uint)count > (uint)_spanLength)
        {
            ThrowAdvancedTooFar(count);
        }
        _writePos += count;
        _spanLength = 0;
    }

    /// <inheritdoc/>
    public Span<byte> GetSpan(int sizeHint = 0)
    {
        int need = sizeHint <= 0 ? 1 : sizeHint;
        long available = Math.Min(_limit, _lapEnd) - _writePos;
        if (available >= need)
        {
            _spanLength = (int)available;
            return new Span<byte>(At(_writePos), _spanLength);
        }
        return GetSpanSlow(need);
    }

    /// <inheritdoc/>
    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Span<byte> span = GetSpan(sizeHint);
        return _memory.Wrap((byte*)Unsafe.AsPointer(ref span[0]), span.Length);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private Span<byte> GetSpanSlow(int need)
    {
        if (!_open)
        {
            throw new InvalidOperationException("No frame is open.");
        }
        need = Math.Min(need, _maxHint);
        while (true)
        {
            long end = _writePos + need;
            if (end <= _lapEnd)
            {
                if (end <= _limit || RefreshLimit(end))
                {
                    _spanLength = (int)(Math.Min(_limit, _lapEnd) - _writePos);
                    return new Span<byte>(At(_writePos), _spanLength);
                }
                MakeRoom(end);
                continue;
            }
            // The request crosses the end of the data area: go on in a chunk record at the next lap.
            long required = _lapEnd + RingLayout.RecordHeaderLength + need;
            if (required > _limit && !RefreshLimit(required))
            {
                MakeRoom(required);
                continue;
            }
            WrapToNextLap();
        }
    }

    // ---------------------------------------------------------------- records

    private void WrapToNextLap()
    {
        long next = _lapEnd;
        long padStart;
        if (_recordStart != _frameStart && _writePos == _recordStart + RingLayout.RecordHeaderLength)
        {
            padStart = _recordStart; // an empty chunk just becomes the padding
        }
        else if (_streaming)
        {
            padStart = PublishOpenRecord(RecordType.FrameChunk);
        }
        else
        {
            padStart = CloseUnpublished();
        }
        if (padStart < next)
        {
            SetType(padStart, RecordType.Padding);
            if (_streaming)
            {
                *LengthAt(next) = 0;
                Publish(padStart, (int)(next - padStart));
            }
            else
            {
                *LengthAt(padStart) = (int)(next - padStart);
            }
        }
        OpenChunk(next);
    }

    /// <summary>Waits until <paramref name="required"/> fits, switching to streaming when waiting cannot help.</summary>
    private void MakeRoom(long required)
    {
        var spinner = new IdleSpinner();
        while (true)
        {
            long consumer = RefreshConsumer();
            if (required <= _limit)
            {
                return;
            }
            if (!_streaming)
            {
                if (consumer >= _frameStart)
                {
                    // The reader has consumed everything before this frame: only publishing frees room.
                    StartStreaming();
                    return;
                }
            }
            else if (_writePos > _recordStart + RingLayout.RecordHeaderLength)
            {
                PublishOpenRecord(RecordType.FrameChunk);
                return;
            }
            WaitForRoom(ref spinner, consumer);
        }
    }

    private void StartStreaming()
    {
        PublishHeld(); // its wake-up check is the one below
        byte* first = At(_frameStart);
        *(int*)(first + RingLayout.TotalLengthOffset) = RingLayout.UnknownLength;
        *(int*)(first + RingLayout.TotalLengthOffset + 4) = 0;
        SetType(_frameStart, RecordType.FrameStart);
        long next;
        int firstLength;
        if (_recordStart == _frameStart)
        {
            firstLength = (int)(_writePos - _frameStart);
            _frameBytes += firstLength - RingLayout.FirstPayloadOffset;
            next = RingLayout.Align(_writePos);
        }
        else
        {
            next = CloseChunkUnpublished();
            firstLength = _firstLength;
        }
        *LengthAt(next) = 0;
        Publish(_frameStart, firstLength);
        _streaming = true;
        OpenChunk(next);
        _signal.WakeConsumerIfSleeping();
    }

    /// <summary>Closes the open record of an unpublished frame (plain stores); returns the next position.</summary>
    private long CloseUnpublished()
    {
        if (_recordStart == _frameStart)
        {
            _firstLength = (int)(_writePos - _frameStart);
            _frameBytes += _firstLength - RingLayout.FirstPayloadOffset;
            SetType(_frameStart, RecordType.FrameStart);
            return RingLayout.Align(_writePos);
        }
        return CloseChunkUnpublished();
    }

    /// <summary>Closes the open chunk of an unpublished frame, dropping it if empty; returns the next position.</summary>
    private long CloseChunkUnpublished()
    {
        int length = (int)(_writePos - _recordStart);
        if (length == RingLayout.RecordHeaderLength)
        {
            return _recordStart;
        }
        _frameBytes += length - RingLayout.RecordHeaderLength;
        SetType(_recordStart, RecordType.FrameChunk);
        *LengthAt(_recordStart) = length;
        return RingLayout.Align(_writePos);
    }

    /// <summary>Streaming: publishes the open chunk as <paramref name="type"/> and opens the next one.</summary>
    private long PublishOpenRecord(RecordType type)
    {
        int length = (int)(_writePos - _recordStart);
        _frameBytes += length - RingLayout.RecordHeaderLength;
        long next = RingLayout.Align(_writePos);
        SetType(_recordStart, type);
        *LengthAt(next) = 0;
        Publish(_recordStart, length);
        OpenChunk(next);
        if (type == RecordType.FrameChunk)
        {
            _signal.WakeConsumerIfSleeping();
        }
        return next;
    }

    /// <summary>Streaming: an empty chunk may sit right at the limit; wait until its header and the terminator fit.</summary>
    private void EnsureRecordEnd()
    {
        if (_writePos > _limit && !RefreshLimit(_writePos))
        {
            var spinner = new IdleSpinner();
            while (!RefreshLimit(_writePos))
            {
                WaitForRoom(ref spinner, *_ring.ProducerCachedConsumer);
            }
        }
    }

    private void OpenChunk(long position)
    {
        _recordStart = position;
        _writePos = position + RingLayout.RecordHeaderLength;
        _lapEnd = LapEnd(position);
    }

    /// <summary>One turn of waiting for the reader to free room, bounded by <see cref="Deadline"/>.</summary>
    private void WaitForRoom(ref IdleSpinner spinner, long observedConsumer)
    {
        PublishHeldAndWake(); // the reader frees no room it cannot reach
        int timeoutMs = Transport.Deadline.RemainingMs(Deadline);
        if (timeoutMs == 0)
        {
            ThrowTimedOut();
        }
        _signal.WaitForSpace(ref spinner, observedConsumer, timeoutMs);
    }

    [DoesNotReturn]
    private void ThrowTimedOut()
    {
        Broken = _open && _streaming;
        throw new XCallTimeoutException(Endpoint, Broken
            ? "the peer stopped taking data in the middle of a frame (the connection closes)"
            : "the peer took no data for the call's timeout (its ring stayed full)");
    }

    private void WaitForSpace(long end)
    {
        var spinner = new IdleSpinner();
        while (!RefreshLimit(end))
        {
            WaitForRoom(ref spinner, *_ring.ProducerCachedConsumer);
        }
    }

    private bool RefreshLimit(long end)
    {
        RefreshConsumer();
        return end <= _limit;
    }

    private long RefreshConsumer()
    {
        long consumer = Volatile.Read(ref *_ring.ConsumerPosition);
        if (consumer > _heldStart && _heldStart >= 0)
        {
            _heldStart = -1; // the reader took the held head and went past it: the batch is out (see the design notes)
        }
        *_ring.ProducerCachedConsumer = consumer;
        _limit = LimitAt(consumer);
        return consumer;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* At(long position) => _data + (position & _mask);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int* LengthAt(long position) => (int*)(_data + (position & _mask));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void SetType(long position, RecordType type) => *(int*)(At(position) + 4) = (int)type;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Publish(long position, int length) => Interlocked.Exchange(ref *LengthAt(position), length);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private long LapEnd(long position) => (position & ~_mask) + _capacity;

    [DoesNotReturn]
    private static void ThrowAdvancedTooFar(int count) =>
        throw new ArgumentOutOfRangeException(nameof(count), count, "Advanced past the span returned by GetSpan.");
}
