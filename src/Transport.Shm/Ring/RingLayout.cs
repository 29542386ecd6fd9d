namespace XCall.Transport.Shm.Ring;

/// <summary>
/// Offsets and sizes of a ring: a control block (positions and wake words, each on its own pair of cache
/// lines) and a power-of-two data area of records <c>{int32 length, int32 type, bytes}</c> that start on cache lines.
/// </summary>
internal static class RingLayout
{
    /// <summary>
    /// Records start on multiples of this, a cache line: a record shares no line with the one before or after it, so
    /// the reader, reading one, never takes from the writer a line the writer is still filling with the next (the
    /// measurements are in docs/benchmarks.md, "Ring records on cache lines").
    /// </summary>
    public const int Alignment = 64;

    /// <summary>The <c>{length, type}</c> header of every record.</summary>
    public const int RecordHeaderLength = 8;

    /// <summary>What a <see cref="RecordType.FrameStart"/> record carries before the payload: frame header,
    /// total payload length, reserved word.</summary>
    public const int FramePrefixLength = FrameHeader.Size + 8;

    /// <summary>Offset of the payload in a <see cref="RecordType.FrameStart"/> record.</summary>
    public const int FirstPayloadOffset = RecordHeaderLength + FramePrefixLength;

    /// <summary>Offset of the total-length word in a <see cref="RecordType.FrameStart"/> record.</summary>
    public const int TotalLengthOffset = RecordHeaderLength + FrameHeader.Size;

    /// <summary>Total length of a streamed frame whose end is not written yet.</summary>
    public const int UnknownLength = -1;

    // Control block: 128 bytes between fields written by different sides (two cache lines, against the
    // adjacent-line prefetcher).

    /// <summary>Producer: end of the records it has published (informational; readers follow record lengths).</summary>
    public const int ProducerPositionOffset = 0;

    /// <summary>Producer: its last read of the consumer position.</summary>
    public const int ProducerCachedConsumerOffset = 128;

    /// <summary>Consumer: everything before this position is consumed and may be overwritten.</summary>
    public const int ConsumerPositionOffset = 256;

    /// <summary>Non-zero while a consumer-side thread sleeps and wants a wake-up when a record is published:
    /// 1 the receive thread (wake <see cref="ConsumerWakeSeqOffset"/>), 2 a caller polling for its reply
    /// (wake <see cref="LeaderWakeSeqOffset"/>), 3 the receive thread, except for a frame the consumer's callers
    /// poll for (a reply, an error, a call nested in a call of theirs).</summary>
    public const int ConsumerSleepingOffset = 384;

    /// <summary>Futex word the receive thread sleeps on; bumped by every wake.</summary>
    public const int ConsumerWakeSeqOffset = 388;

    /// <summary>Futex word a caller holding the receiver role sleeps on.</summary>
    public const int LeaderWakeSeqOffset = 392;

    /// <summary>1 while the producer sleeps for room and wants a wake-up when the consumer releases.</summary>
    public const int ProducerSleepingOffset = 512;

    /// <summary>Futex word the producer sleeps on while the ring is full.</summary>
    public const int ProducerWakeSeqOffset = 516;

    /// <summary>The producer's process heartbeat (int64): counted up by its heartbeat thread a few times a
    /// second while the connection lives; the consumer's side takes a counter that stops for
    /// <see cref="ShmOptions.HeartbeatTimeout"/> for a peer that no longer runs.</summary>
    public const int HeartbeatOffset = 640;

    /// <summary>Consumer: the position of the last held batch head it took without waiting for the producer to
    /// publish it (int64; see RingWriter's design notes). The producer reads it after each frame it adds to a batch.</summary>
    public const int ClaimedHeadOffset = 768;

    /// <summary>Bytes reserved for one control block.</summary>
    public const int ControlBlockLength = 1024;

    /// <summary>Rounds up to the record alignment.</summary>
    public static long Align(long position) => (position + (Alignment - 1)) & ~(long)(Alignment - 1);
}
