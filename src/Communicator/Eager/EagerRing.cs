using System.Runtime.CompilerServices;

namespace XCall.Communicator.Eager;

/// <summary>
/// One sender's small messages to one receiver: a single-producer single-consumer ring of records in the receiver's
/// inbox file, written by the sender's process and read by the receiver's, with no call in between.
/// </summary>
/// <remarks>
/// Layout from <see cref="_base"/>: the producer's tail and its cached copy of the head at 0; the delivered count,
/// the reader-in-calls flag and the lent-message answer and claim (consumer's, seldom written) at 128; the consumer's head at
/// 256; the data area of <see cref="Capacity"/> bytes at <see cref="HeaderBytes"/>. Each group is two cache lines
/// from the next, so the head the consumer moves on every message shares no line with what the producer reads on
/// every message.
/// </remarks>
internal readonly unsafe struct EagerRing
{
    // Design: the producer (the sender, one thread at a time under its outbox lock) writes a record's tag, context
    // and payload, then zeroes the mark word where the record after it will start, then publishes the record by
    // writing its mark (its length + 1, so an empty message has a mark too) with a release store; the tail is the
    // producer's own. The consumer (one thread at a time under the inbox's per-source flag) polls the mark at its
    // head with an acquire load: 0 is nothing yet, -1 pads the rest of the data area (the record starts at 0), else
    // a record whose bytes it reads; it publishes the new head with a release store once it no longer needs them.
    // So a message costs the consumer the record's own cache lines only, never the producer's tail. A record is 16
    // header bytes {mark, tag, context} and its payload padded to 8; it never wraps. At a wrap the producer writes
    // the record at 0 (mark included) before the padding mark, so the consumer reaches offset 0 only once its
    // record is there. The producer writes only into bytes the consumer released: free space is Capacity - (tail -
    // head), checked against a cached head it re-reads from the consumer's line only when the cached one says
    // there is no room, and it needs room for the record and the next mark word. The data area starts zeroed.
    // Delivered counts the messages of this sender that came as calls instead (XCall one-way posts), written by
    // the consumer side once each is in the mailbox: the producer writes into the ring only when it equals the
    // posts it sent, so a ring message never overtakes a posted one. ReaderInCalls (consumer's) says the reader
    // sleeps on the calls' connection from this sender: the producer then sends as a call; one that wrote a record
    // just as the flag went up (it reads the flag again after publishing, both sides fence) nudges the reader with
    // a call. A lent message (a record of LendTag, see LentMessage) names bytes in the sender's memory; the
    // consumer side answers it in Answer ({number << 2 | LentAnswer}) once it copied them out (or refused to), and
    // the sender's thread waits for that answer before it lets the bytes change: one lent message per ring at a time.
    // Claim (consumer's, the number of the last lent message whose copy a receive started) tells a sender that
    // waited long that the answer is on its way: the copy itself is slow, not the receiver, so it needs no nudge.
    public const int Capacity = 64 << 10;
    public const int HeaderBytes = 384;
    public const int Bytes = HeaderBytes + Capacity;
    public const int RecordHeaderBytes = 16;

    /// <summary>The tag of an empty record that announces a large message coming as a call (real tags are at least 0); its context is the message's number.</summary>
    public const int LargeMarkerTag = -1;

    /// <summary>The tag of a record that lends a large message (its payload a <see cref="LentMessage"/>); its context is the message's.</summary>
    public const int LendTag = -2;

    /// <summary>The largest payload a record holds.</summary>
    public const int MaxPayload = Capacity / 4;

    private const int PaddingMark = -1;
    private const int MarkBytes = 8; // the mark word the producer zeroes ahead of each record, kept 8-aligned

    private readonly byte* _base;

    public EagerRing(byte* ringBase) => _base = ringBase;

    private long* Tail => (long*)_base;

    private long* CachedHead => (long*)(_base + 8);

    private long* DeliveredWord => (long*)(_base + 128);

    private int* ReaderInCallsWord => (int*)(_base + 136);

    private long* AnswerWord => (long*)(_base + 144);
    private long* ClaimWord => (long*)(_base + 152);

    private long* Head => (long*)(_base + 256);

    /// <summary>The reader sleeps reading its calls' connection from this sender, not the ring: a message must go as a call (or nudge it).</summary>
    public bool ReaderInCalls => Volatile.Read(ref *ReaderInCallsWord) != 0;

    /// <summary>Consumer side: says whether the reader sleeps reading the calls' connection (set before it sleeps, with a full fence).</summary>
    public void SetReaderInCalls(bool value) => Interlocked.Exchange(ref *ReaderInCallsWord, value ? 1 : 0);

    private byte* Data => _base + HeaderBytes;

    /// <summary>The messages of this sender that the receiver took from calls (see the design note).</summary>
    public long Delivered => Volatile.Read(ref *DeliveredWord);

    /// <summary>True when a record waits (any thread of the consumer's process may ask): the mark at the head is set.</summary>
    public bool HasData => Volatile.Read(ref *(int*)(Data + (int)(Volatile.Read(ref *Head) & (Capacity - 1)))) != 0;

    /// <summary>The consumer side's answer to lent message <paramref name="number"/>, or <see cref="LentAnswer.None"/> while it has none.</summary>
    public LentAnswer AnswerTo(long number)
    {
        long answer = Volatile.Read(ref *AnswerWord);
        return answer >> 2 == number ? (LentAnswer)(answer & 3) : LentAnswer.None;
    }

    /// <summary>Consumer side: claims lent message <paramref name="number"/>: a receive took it and starts copying its bytes, so its answer follows with no nudge.</summary>
    public void Claim(long number) => Volatile.Write(ref *ClaimWord, number);

    /// <summary>Whether lent message <paramref name="number"/> was claimed (see <see cref="Claim"/>).</summary>
    public bool Claimed(long number) => Volatile.Read(ref *ClaimWord) >= number;

    /// <summary>Consumer side: answers lent message <paramref name="number"/> (a full fence follows, before the sender's bell).</summary>
    public void Answer(long number, LentAnswer answer) => Interlocked.Exchange(ref *AnswerWord, (number << 2) | (long)answer);

    /// <summary>The consumer side counts one message that came as a call.</summary>
    public void CountDelivered() => Interlocked.Increment(ref *DeliveredWord);

    /// <summary>Producer: appends a record and publishes it; false when the ring lacks room.</summary>
    public bool TryWrite(long context, int tag, ReadOnlySpan<byte> payload)
    {
        if (payload.Length > MaxPayload)
        {
            return false;
        }
        int need = RecordHeaderBytes + Align(payload.Length);
        long tail = *Tail;
        int position = (int)(tail & (Capacity - 1));
        int toEnd = Capacity - position;
        int pad = need > toEnd ? toEnd : 0;
        long end = tail + pad + need + MarkBytes; // the record and the next record's mark word
        if (end - *CachedHead > Capacity)
        {
            *CachedHead = Volatile.Read(ref *Head);
            if (end - *CachedHead > Capacity)
            {
                return false;
            }
        }
        int start = pad != 0 ? 0 : position;
        byte* record = Data + start;
        *(int*)(record + 4) = tag;
        *(long*)(record + 8) = context;
        payload.CopyTo(new Span<byte>(record + RecordHeaderBytes, payload.Length));
        *(long*)(Data + ((start + need) & (Capacity - 1))) = 0; // the next record's mark: nothing yet
        Volatile.Write(ref *(int*)record, payload.Length + 1);
        if (pad != 0)
        {
            Volatile.Write(ref *(int*)(Data + position), PaddingMark); // after the record at 0: the consumer goes there only now
        }
        *Tail = tail + pad + need;
        return true;
    }

    /// <summary>Consumer: the next record, or false when none waits; <see cref="Release"/> it once its bytes are used.</summary>
    /// <exception cref="InvalidDataException">The record's mark is not one the producer writes (the ring is corrupt).</exception>
    public bool TryPeek(out long context, out int tag, out ReadOnlySpan<byte> payload, out long next)
    {
        long head = *Head;
        while (true)
        {
            int position = (int)(head & (Capacity - 1));
            byte* record = Data + position;
            int mark = Volatile.Read(ref *(int*)record);
            if (mark == 0)
            {
                context = 0;
                tag = 0;
                payload = default;
                next = head;
                return false;
            }
            if (mark == PaddingMark)
            {
                head += Capacity - position;
                Volatile.Write(ref *Head, head);
                continue;
            }
            int length = mark - 1;
            if ((uint)length > MaxPayload || position + RecordHeaderBytes + length > Capacity)
            {
                throw new InvalidDataException($"A record of the eager ring says it holds {length} bytes at {position}: the ring is corrupt.");
            }
            tag = *(int*)(record + 4);
            context = *(long*)(record + 8);
            payload = new ReadOnlySpan<byte>(record + RecordHeaderBytes, length);
            next = head + RecordHeaderBytes + Align(length);
            return true;
        }
    }

    /// <summary>Consumer: gives back the bytes up to <paramref name="next"/> (from <see cref="TryPeek"/>).</summary>
    public void Release(long next) => Volatile.Write(ref *Head, next);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int Align(int length) => (length + 7) & ~7;
}
