using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using XCall.Marshal;

namespace XCall.Transport.Shm.Ring;

// Design: the consumer half of the ring. Only one thread at a time polls (the channel's "receiver role"),
// so the read position and the gathering state are plain fields. The consumer reads the length word at its
// position with an acquire load: non-zero means the producer finished the record (and, for a FrameStart,
// every later record of the frame) before publishing it. After a record is handled, the consumer publishes
// its new position with an interlocked exchange (release plus the full fence the producer's wake-up check
// needs) and wakes the producer if it sleeps for room. The consumer never writes into the data area.
//
// A handler may detach the single-record frame it is handed (Detach): the frame is released before the handler
// returns, so the thread may poll again from inside it (a reply it waits for) or another thread may take over the
// polling. Which frame a thread detached is kept per thread (t_detached), so after the handler returns the reader
// touches nothing shared: another thread may own the read position by then.
//
// A run of one-way calls taken through TryTakeOneWay publishes the consumer position lazily: every 1/16 of the ring, at
// once while the producer sleeps for room or when nothing follows the call taken, and whenever a poll finds nothing
// (or a held head) at the read position, so room a run consumed never stays unpublished once the ring looks empty.
// Everything else releases at once.
//
// A negative length is a held batch head (RingWriter's design notes): Poll leaves it for HeldClaimDelay, then takes it
// as if its length were positive, after saying so in the ClaimedHead word.
//
// Every length and type is checked before use: a record must fit between its position and the end of the
// data area, a padding record must end a lap it did not start, types must come in a valid order, in-place totals
// must add up. Anything else is an
// XCallProtocolException, which closes the channel.
internal sealed unsafe class RingReader
{
    private readonly ShmRing _ring;
    private readonly RingSignal _signal;
    private readonly byte* _data;
    private readonly long _mask;
    private readonly int _capacity;
    private readonly long _maxFrameLength;
    private readonly InPlaceInput _inPlace;
    private readonly GatheredFrame _gathered;
    private long _position;
    private long _detachable = -1; // the end of the frame being handled when the handler may detach it, else -1
    private long _released;        // the consumer position last published (Release); _position may be ahead (TryTakeOneWay)
    private readonly long _lazyReleaseBytes;
    private long _heldSeenAt = -1; // the held batch head seen last, and since when (Stopwatch ticks)
    private long _heldSeenTime;

    // The reader and position + 1 of the frame this thread's handler detached last (0: none), in one object per
    // thread: one lookup of the thread's statics where each field of its own would cost one per access.
    [ThreadStatic]
    private static DetachedFrame? t_detached;

    private sealed class DetachedFrame
    {
        public RingReader? By;
        public long At;
    }

    /// <summary>The peer's memory for arrays it lends (set on every reader of a frame); null when we cannot read it.</summary>
    public IPeerMemory? PeerMemory { get; init; }

    /// <summary>The peer's memory for a frame that may hold lent arrays (a call whose caller waits), else null: a lent
    /// block anywhere else is malformed.</summary>
    internal IPeerMemory? PeerMemoryFor(in FrameHeader header) =>
        header.Kind == FrameKind.Call && (header.Flags & FrameFlags.CallerWaits) != 0 ? PeerMemory : null;

    /// <summary>The arrays our side lent; a reply or error frame from the peer ends its call's loans.</summary>
    public Lending.LoanBook? Loans { get; init; }

    public RingReader(ShmRing ring, RingSignal signal, long maxFrameLength)
    {
        _ring = ring;
        _signal = signal;
        _data = ring.Data;
        _capacity = ring.Capacity;
        _mask = ring.Capacity - 1;
        _maxFrameLength = maxFrameLength;
        _position = Volatile.Read(ref *ring.ConsumerPosition);
        _released = _position;
        _lazyReleaseBytes = ring.Capacity / 16;
        _inPlace = new InPlaceInput(this);
        _gathered = new GatheredFrame(this);
    }

    /// <summary>True when a published record waits at the read position.</summary>
    public bool HasData
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Volatile.Read(ref *(int*)(_data + (_position & _mask))) != 0;
    }

    /// <summary>The read position (everything before it is consumed).</summary>
    public long Position => _position;

    /// <summary>Reply and error frames handed to the handler so far (only the thread that polls reads it). Counted
    /// when a frame is delivered, not when it starts: a streamed reply the peer aborts (and follows with an error
    /// frame for the same call) never counts, so each call is answered once.</summary>
    public long Answers { get; private set; }

    /// <summary>An answer counted in <see cref="Answers"/>: a reply or an error, but a long wait's
    /// (<see cref="FrameFlags.LongWait"/>), whose call the sender does not count either (see ShmChannel.ReleaseRole).</summary>
    private static bool IsOwedAnswer(FrameKind kind, ushort flags) => kind is FrameKind.Reply or FrameKind.Error && (flags & FrameFlags.LongWait) == 0;

    /// <summary>
    /// Consumes records until one frame was delivered to <paramref name="handler"/>, or the ring is empty,
    /// or a streamed frame made progress. Exceptions from the handler propagate; the reader must not be
    /// polled again after one.
    /// </summary>
    public PollResult Poll(IFrameHandler handler)
    {
        while (true)
        {
            long position = _position;
            byte* record = _data + (position & _mask);
            int length = Volatile.Read(ref *(int*)record);
            if (length <= 0)
            {
                if (_released != position)
                {
                    Release(position); // what a run of one-way calls consumed: the writer may wait for that room
                }
                if (length == 0)
                {
                    return PollResult.Empty;
                }
                if (!ClaimHeld(position))
                {
                    return PollResult.Held;
                }
                if (*(int*)(record + 4) != (int)RecordType.FrameStart)
                {
                    throw Malformed(position, $"a held record of type {*(int*)(record + 4)} (only a frame's start can be held)");
                }
                length = -length;
            }
            CheckLength(position, length);
            int type = *(int*)(record + 4);
            long next = position + RingLayout.Align(length);
            switch ((RecordType)type)
            {
                case RecordType.FrameStart:
                    return OnFrameStart(record, length, next, handler);
                case RecordType.Padding:
                    CheckPadding(position, next);
                    Release(next);
                    continue;
                case RecordType.FrameChunk:
                case RecordType.FrameEnd:
                case RecordType.FrameAbort:
                    return OnStreamed((RecordType)type, record, length, next, handler);
                case RecordType.Goodbye:
                    Release(next);
                    return PollResult.Goodbye;
                default:
                    throw Malformed(position, $"unknown record type {type}");
            }
        }
    }

    /// <summary>
    /// A held batch head at <paramref name="position"/> (RingWriter's design notes): false while it has been seen for less
    /// than <see cref="HeldClaimDelay"/> (the writer is still adding to the batch: reading on would chase each frame's
    /// cache line as it is written); after that, takes it: tells the writer through the ClaimedHead word, with a full
    /// fence before the frames after the head are read.
    /// </summary>
    private bool ClaimHeld(long position)
    {
        long now = Stopwatch.GetTimestamp();
        if (_heldSeenAt != position)
        {
            _heldSeenAt = position;
            _heldSeenTime = now;
            return false;
        }
        if (now - _heldSeenTime < s_heldClaimTicks)
        {
            return false;
        }
        Interlocked.Exchange(ref *_ring.ClaimedHead, position + 1);
        _signal.BoundNextConsumerWait(); // a frame the writer adds now may be missed by this poll (RingWriter's design notes)
        HeldClaims++;
        return true;
    }

    /// <summary>How long a reader leaves a held batch head to its writer before it takes the head itself: longer than
    /// the writer takes to fill a batch, short enough that a lone one-way call waits for nothing noticeable.</summary>
    public static readonly TimeSpan HeldClaimDelay = TimeSpan.FromMicroseconds(5);

    private static readonly long s_heldClaimTicks = Math.Max(1, (long)(HeldClaimDelay.TotalSeconds * Stopwatch.Frequency));

    /// <summary>Held batch heads this reader took before their writer published them (tests).</summary>
    public long HeldClaims { get; private set; }

    /// <summary>True inside the handler of a frame it may detach (one record, not yet released).</summary>
    public bool CanDetach => _detachable >= 0;

    /// <summary>
    /// From the handler of the frame being delivered (<see cref="CanDetach"/>), which copied what it needs of it:
    /// releases the frame now; <see cref="Poll"/> then returns <see cref="PollResult.Detached"/> for it and, after the
    /// handler returned, touches nothing shared.
    /// </summary>
    public void Detach()
    {
        long next = _detachable;
        _detachable = -1;
        DetachedFrame detached = t_detached ??= new DetachedFrame();
        detached.At = _position + 1;
        detached.By = this;
        Release(next);
    }

    /// <summary>
    /// For a detached run of one-way calls (<see cref="FrameChannel.TryDetachNextOneWay"/>): when the record at the read
    /// position is a whole one-way frame of one record whose payload fits in <paramref name="payload"/>, copies the
    /// payload, releases the frame and returns true. Anything else (nothing published, another kind, a frame of several
    /// records, a padding) is left where it is for <see cref="Poll"/>, which checks it in full.
    /// </summary>
    public bool TryTakeOneWay(Span<byte> payload, out FrameHeader header, out int length)
    {
        header = default;
        length = 0;
        long position = _position;
        byte* record = _data + (position & _mask);
        int recordLength = Volatile.Read(ref *(int*)record);
        if (recordLength <= 0 || *(int*)(record + 4) != (int)RecordType.FrameStart || _gathered.IsActive)
        {
            return false;
        }
        CheckLength(position, recordLength);
        int first = recordLength - RingLayout.FirstPayloadOffset;
        if (first < 0 || first > payload.Length || *(int*)(record + RingLayout.TotalLengthOffset) != first
            || (FrameKind)record[RingLayout.RecordHeaderLength] != FrameKind.OneWay)
        {
            return false;
        }
        header = FrameHeaderCodec.Read(record + RingLayout.RecordHeaderLength);
        SmallCopy.Copy(new ReadOnlySpan<byte>(record + RingLayout.FirstPayloadOffset, first), payload);
        length = first;
        long next = position + RingLayout.Align(recordLength);
        // Also released when nothing follows: the run ends with this call, which may run long, and a writer that
        // then waits for room would wait for it (or for the receiving's hand-over).
        if (next - _released >= _lazyReleaseBytes || Volatile.Read(ref *(int*)(_data + (next & _mask))) == 0
            || Volatile.Read(ref *_ring.ProducerSleeping) != 0)
        {
            Release(next);
        }
        else
        {
            _position = next; // released later (see the design notes)
        }
        return true;
    }

    /// <summary>Drops a partly gathered frame (the channel is closing).</summary>
    public void Discard() => _gathered.Reset();

    private PollResult OnFrameStart(byte* record, int length, long next, IFrameHandler handler)
    {
        if (_gathered.IsActive)
        {
            throw Malformed(_position, "a frame starts inside a streamed frame");
        }
        if (length < RingLayout.FirstPayloadOffset)
        {
            throw Malformed(_position, $"frame record of {length} bytes is shorter than its header");
        }
        FrameHeader header = FrameHeaderCodec.Read(record + RingLayout.RecordHeaderLength);
        bool answer = header.Kind is FrameKind.Reply or FrameKind.Error;
        bool owed = IsOwedAnswer(header.Kind, header.Flags);
        if (answer && Loans is { HasSealed: true } loans)
        {
            loans.Release(header.CallId); // the peer answers a call after reading its arguments
        }
        int total = *(int*)(record + RingLayout.TotalLengthOffset);
        int first = length - RingLayout.FirstPayloadOffset;
        byte* payload = record + RingLayout.FirstPayloadOffset;
        if (total == first)
        {
            var reader = new MarshalReader(new ReadOnlySpan<byte>(payload, first), handler.Limits) { PeerMemory = PeerMemoryFor(header) };
            if (owed)
            {
                Answers++;
            }
            long at = _position;
            _detachable = next;
            handler.OnFrame(in header, ref reader);
            if (t_detached is { } detached && detached.At == at + 1 && detached.By == this)
            {
                detached.At = 0;
                detached.By = null;
                return PollResult.Detached;
            }
            _detachable = -1;
            Release(next);
            return PollResult.Frame;
        }
        _detachable = -1;
        if (total == RingLayout.UnknownLength)
        {
            _gathered.Begin(header);
            _gathered.Append(payload, first, _maxFrameLength, _position);
            Release(next);
            return PollResult.Progress;
        }
        if (total < first || total > _capacity || total > _maxFrameLength)
        {
            throw Malformed(_position, $"frame total {total} does not match its first record ({first} bytes)");
        }
        _inPlace.Begin(next, total - first);
        var chunked = new MarshalReader(new ReadOnlySpan<byte>(payload, first), total, _inPlace, handler.Limits) { PeerMemory = PeerMemoryFor(header) };
        if (owed)
        {
            Answers++;
        }
        handler.OnFrame(in header, ref chunked);
        _inPlace.Finish();
        return PollResult.Frame;
    }

    private PollResult OnStreamed(RecordType type, byte* record, int length, long next, IFrameHandler handler)
    {
        if (!_gathered.IsActive)
        {
            throw Malformed(_position, $"{type} record outside a streamed frame");
        }
        switch (type)
        {
            case RecordType.FrameChunk:
                _gathered.Append(record + RingLayout.RecordHeaderLength, length - RingLayout.RecordHeaderLength, _maxFrameLength, _position);
                Release(next);
                return PollResult.Progress;
            case RecordType.FrameEnd:
                _gathered.Append(record + RingLayout.RecordHeaderLength, length - RingLayout.RecordHeaderLength, _maxFrameLength, _position);
                Release(next);
                if (IsOwedAnswer(_gathered.Kind, _gathered.Flags))
                {
                    Answers++;
                }
                _detachable = -1;
                _gathered.Dispatch(handler);
                return PollResult.Frame;
            default:
                _gathered.Reset();
                Release(next);
                return PollResult.Progress;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Release(long next)
    {
        _position = next;
        _released = next;
        Interlocked.Exchange(ref *_ring.ConsumerPosition, next);
        _signal.WakeProducerIfSleeping();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void CheckLength(long position, int length)
    {
        if (length < RingLayout.RecordHeaderLength || length > _capacity - (int)(position & _mask))
        {
            ThrowBadLength(position, length);
        }
    }

    /// <summary>A padding record fills the rest of a lap after a record: it starts past the lap's start and ends at
    /// its end. A whole-lap padding would meet itself again at the next lap, so the reader would never return.</summary>
    private void CheckPadding(long position, long next)
    {
        if ((position & _mask) == 0 || (next & _mask) != 0)
        {
            throw Malformed(position, $"padding from offset {position & _mask} to {next - (position & ~_mask)} does not fill the rest of a lap");
        }
    }

    [DoesNotReturn]
    private void ThrowBadLength(long position, int length) =>
        throw Malformed(position, $"record length {length} does not fit in the ring");

    private static XCallProtocolException Malformed(long position, string what) =>
        new($"Malformed shared-memory record at ring position {position}: {what}.");

    /// <summary>The chunks of a frame that is all in the ring but not contiguous, read in place; the frame is
    /// released as a whole once handled.</summary>
    private sealed class InPlaceInput(RingReader owner) : IMarshalInput
    {
        private long _next;
        private long _remaining;
        private long _lapLimit;

        public void Begin(long next, long remaining)
        {
            _next = next;
            _remaining = remaining;
            _lapLimit = owner._position + owner._capacity; // nothing released: the frame fits in one lap
        }

        public ReadOnlySpan<byte> NextChunk()
        {
            if (_remaining <= 0)
            {
                return default;
            }
            // The records read so far stay unreleased until Finish: the handler may hold spans into them.
            while (true)
            {
                long position = _next;
                byte* record = owner._data + (position & owner._mask);
                int length = Volatile.Read(ref *(int*)record);
                if (length == 0)
                {
                    throw Malformed(position, "an in-place frame ends before its total length");
                }
                owner.CheckLength(position, length);
                int type = *(int*)(record + 4);
                long after = position + RingLayout.Align(length);
                if (after > _lapLimit)
                {
                    throw Malformed(position, "an in-place frame runs past one lap of the ring");
                }
                if (type == (int)RecordType.Padding)
                {
                    owner.CheckPadding(position, after);
                    _next = after;
                    continue;
                }
                int count = length - RingLayout.RecordHeaderLength;
                if (type != (int)RecordType.FrameChunk || count <= 0 || count > _remaining)
                {
                    throw Malformed(position, $"record type {type} of {count} bytes inside an in-place frame with {_remaining} bytes to go");
                }
                _remaining -= count;
                _next = after;
                return new ReadOnlySpan<byte>(record + RingLayout.RecordHeaderLength, count);
            }
        }

        /// <summary>Skips what the handler left unread and releases the whole frame.</summary>
        public void Finish()
        {
            while (_remaining > 0)
            {
                NextChunk();
            }
            owner.Release(_next);
        }
    }
}
