using System.Runtime.CompilerServices;

namespace XCall.Communicator.Eager;

/// <summary>
/// One sender's small messages to one receiver: a single-producer single-consumer ring of records in the receiver's
/// inbox file, written by the sender's process and read by the receiver's, with no call in between.
/// </summary>
/// <remarks>
/// Layout from <see cref="_base"/>: the tail (producer's) at 0, the head, the delivered count, the reader-in-calls
/// flag and the lent-message answer (consumer's) from 128, two cache lines apart; the data area of
/// <see cref="Capacity"/> bytes at <see cref="HeaderBytes"/>.
/// </remarks>
internal readonly unsafe struct EagerRing
{
    // Design: the producer (the sender, one thread at a time under its outbox lock) writes a record's header and
    // payload, then publishes the new tail with a release store; the consumer (one thread at a time under the
    // inbox's per-source flag) reads the tail with an acquire load, reads the records before it, and publishes the
    // new head with a release store once it no longer needs their bytes. A record is 16 header bytes {length,
    // tag, context} and its payload padded to 8; it never wraps: when it does not fit before the end, a length
    // of -1 pads the rest and the record starts at 0. Free space is Capacity - (tail - head), so the producer never
    // overwrites bytes the consumer has not released. Delivered counts the messages of this sender that came
    // as calls instead (XCall one-way posts), written by the consumer side once each is in the mailbox: the
    // producer writes into the ring only when it equals the posts it sent, so a ring message never overtakes a
    // posted one. ReaderInCalls (consumer's) says the reader sleeps on the calls' connection from this sender:
    // the producer then sends as a call; one that wrote a record just as the flag went up (it reads the flag
    // again after publishing, both sides fence) nudges the reader with a call. A lent message (a record of
    // LendTag, see LentMessage) names bytes in the sender's memory; the consumer side answers it in Answer
    // ({number << 2 | LentAnswer}) once it copied them out (or refused to), and the sender's thread waits for that
    // answer before it lets the bytes change: one lent message per ring at a time.
    public const int Capacity = 64 << 10;
    public const int HeaderBytes = 256;
    public const int Bytes = HeaderBytes + Capacity;
    public const int RecordHeaderBytes = 16;

    /// <summary>The tag of an empty record that announces a large message coming as a call (real tags are at least 0); its context is the message's number.</summary>
    public const int LargeMarkerTag = -1;

    /// <summary>The tag of a record that lends a large message (its payload a <see cref="LentMessage"/>); its context is the message's.</summary>
    public const int LendTag = -2;

    /// <summary>The largest payload a record holds.</summary>
    public const int MaxPayload = Capacity / 4;

    private const int Padding = -1;

    private readonly byte* _base;

    public EagerRing(byte* ringBase) => _base = ringBase;

    private long* Tail => (long*)_base;

    private long* Head => (long*)(_base + 128);

    private long* DeliveredWord => (long*)(_base + 136);

    private int* ReaderInCallsWord => (int*)(_base + 144);

    private long* AnswerWord => (long*)(_base + 152);

    /// <summary>The reader sleeps reading its calls' connection from this sender, not the ring: a message must go as a call (or nudge it).</summary>
    public bool ReaderInCalls => Volatile.Read(ref *ReaderInCallsWord) != 0;

    /// <summary>Consumer side: says whether the reader sleeps reading the calls' connection (set before it sleeps, with a full fence).</summary>
    public void SetReaderInCalls(bool value) => Interlocked.Exchange(ref *ReaderInCallsWord, value ? 1 : 0);

    private byte* Data => _base + HeaderBytes;

    /// <summary>The messages of this sender that the receiver took from calls (see the design note).</summary>
    public long Delivered => Volatile.Read(ref *DeliveredWord);

    /// <summary>True when a record waits (any thread may ask).</summary>
    public bool HasData => Volatile.Read(ref *Tail) != Volatile.Read(ref *Head);

    /// <summary>The consumer side's answer to lent message <paramref name="number"/>, or <see cref="LentAnswer.None"/> while it has none.</summary>
    public LentAnswer AnswerTo(long number)
    {
        long answer = Volatile.Read(ref *AnswerWord);
        return answer >> 2 == number ? (LentAnswer)(answer & 3) : LentAnswer.None;
    }

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
        long head = Volatile.Read(ref *Head);
        int position = (int)(tail & (Capacity - 1));
        int toEnd = Capacity - position;
        int pad = need > toEnd ? toEnd : 0;
        if (tail + pad + need - head > Capacity)
        {
            return false;
        }
        if (pad != 0)
        {
            *(int*)(Data + position) = Padding;
            tail += pad;
            position = 0;
        }
        byte* record = Data + position;
        *(int*)record = payload.Length;
        *(int*)(record + 4) = tag;
        *(long*)(record + 8) = context;
        payload.CopyTo(new Span<byte>(record + RecordHeaderBytes, payload.Length));
        Volatile.Write(ref *Tail, tail + need);
        return true;
    }

    /// <summary>Consumer: the next record, or false when none waits; <see cref="Release"/> it once its bytes are used.</summary>
    public bool TryPeek(out long context, out int tag, out ReadOnlySpan<byte> payload, out long next)
    {
        long head = *Head;
        while (true)
        {
            if (head == Volatile.Read(ref *Tail))
            {
                context = 0;
                tag = 0;
                payload = default;
                next = head;
                return false;
            }
            int position = (int)(head & (Capacity - 1));
            byte* record = Data + position;
            int length = *(int*)record;
            if (length == Padding)
            {
                head += Capacity - position;
                Volatile.Write(ref *Head, head);
                continue;
            }
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
