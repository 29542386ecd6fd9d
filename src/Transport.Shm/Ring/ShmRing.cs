namespace XCall.Transport.Shm.Ring;

/// <summary>
/// One direction of a connection in shared memory: the control block and the data area. Only pointers;
/// the memory belongs to the segment (or to a test).
/// </summary>
internal sealed unsafe class ShmRing
{
    /// <summary>Wraps the ring at <paramref name="control"/> / <paramref name="data"/>.</summary>
    public ShmRing(byte* control, byte* data, int capacity)
    {
        // The smallest ring a frame can always cross: a first record's reserve (104 bytes, aligned to 128), the writer's
        // one alignment unit before the consumer, and a padding record of one unit before a lap end.
        if (capacity < 256 || (capacity & (capacity - 1)) != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(capacity), capacity, "Ring capacity must be a power of two of at least 256 bytes.");
        }
        Control = control;
        Data = data;
        Capacity = capacity;
    }

    public byte* Control { get; }

    public byte* Data { get; }

    public int Capacity { get; }

    public long* ProducerPosition => (long*)(Control + RingLayout.ProducerPositionOffset);

    public long* ProducerCachedConsumer => (long*)(Control + RingLayout.ProducerCachedConsumerOffset);

    public long* ConsumerPosition => (long*)(Control + RingLayout.ConsumerPositionOffset);

    public int* ConsumerSleeping => (int*)(Control + RingLayout.ConsumerSleepingOffset);

    public int* ConsumerWakeSeq => (int*)(Control + RingLayout.ConsumerWakeSeqOffset);

    public int* LeaderWakeSeq => (int*)(Control + RingLayout.LeaderWakeSeqOffset);

    public int* ProducerSleeping => (int*)(Control + RingLayout.ProducerSleepingOffset);

    public int* ProducerWakeSeq => (int*)(Control + RingLayout.ProducerWakeSeqOffset);

    public long* Heartbeat => (long*)(Control + RingLayout.HeartbeatOffset);

    public long* ClaimedHead => (long*)(Control + RingLayout.ClaimedHeadOffset);
}
