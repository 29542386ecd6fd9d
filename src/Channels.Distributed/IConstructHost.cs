namespace XCall.Channels.Distributed;

/// <summary>
/// What a process that hosts named constructs offers the other processes of its world: the remote ends of its
/// channels, barriers and buckets call it with the id the name directory gave them. A channel operation answers
/// 0 when it succeeded, the poison's strength when the channel is poisoned and -1 when it is completed; a value that fits in eight bytes
/// travels as a word, any other value as the bytes its <see cref="ChannelCodec{T}"/> wrote.
/// </summary>
[Remotable]
internal interface IConstructHost
{
    /// <summary>
    /// Writes a word-sized value; completes when the channel took it (for an unbuffered channel: when a reader did);
    /// cancelling it withdraws the value unless it was taken. Remote ends write only through the async methods, even
    /// for a blocking write: none of this contract's methods blocks the thread that runs it, so a thread of the host that
    /// waits on a channel may run them (<see cref="RemoteEndsPump"/>).
    /// </summary>
    ValueTask<int> WriteWordAsync(int id, long word, CancellationToken cancellationToken);

    /// <summary>Writes a value marshalled by the channel's codec, as <see cref="WriteWordAsync"/> does.</summary>
    ValueTask<int> WriteBytesAsync(int id, byte[] value, CancellationToken cancellationToken);

    /// <summary>Reads a word-sized value; <paramref name="extended"/> begins an extended rendezvous that <see cref="EndRead"/> ends.</summary>
    ValueTask<WordRead> ReadWordAsync(int id, bool extended, CancellationToken cancellationToken);

    /// <summary>Reads a value marshalled by the channel's codec.</summary>
    ValueTask<BytesRead> ReadBytesAsync(int id, bool extended, CancellationToken cancellationToken);

    /// <summary>Ends the extended rendezvous a read with <c>extended</c> began.</summary>
    void EndRead(int id);

    /// <summary>Poisons the channel.</summary>
    void Poison(int id, int strength);

    /// <summary>Completes the channel's writing side (readers end once a buffer is drained).</summary>
    void Complete(int id);

    /// <summary>
    /// Registers a remote writer of a channel: for a buffered channel its id (0 up) and the credits (free slots) it
    /// holds from now on, for an unbuffered one a writer id of -1 (its writes are rendezvous calls).
    /// </summary>
    ValueTask<WriterGrant> OpenWriterAsync(int id);

    /// <summary>
    /// Values a remote writer wrote with its credits, batch <paramref name="sequence"/> (0 up) of that writer: as words
    /// when they fit in eight bytes, else as the blocks of <paramref name="bytes"/> whose <paramref name="lengths"/> are
    /// given. <paramref name="returned"/> credits come back unused (the writer pauses).
    /// </summary>
    [OneWay]
    void WriteBatch(int id, int writer, long sequence, int returned, ReadOnlyMemory<long> words, ReadOnlyMemory<byte> bytes, ReadOnlyMemory<int> lengths);

    /// <summary>
    /// More credits for a remote writer that ran out and waits: answered when the buffer has any room, or with the
    /// channel's end status.
    /// </summary>
    Task<WriterGrant> UrgentCreditsAsync(int id, int writer);

    /// <summary>
    /// The request for credits a lone writer keeps out: answered when the reader has freed a quarter of the buffer, or
    /// with the channel's end status, which may take long, so nobody polls for the answer.
    /// </summary>
    [LongWait]
    Task<WriterGrant> StandingCreditsAsync(int id, int writer);

    /// <summary>Completes once the first <paramref name="batches"/> batches of a remote writer are in the channel (or the channel ended).</summary>
    Task AppliedAsync(int id, int writer, long batches);

    /// <summary>Poisons (<paramref name="strength"/> above 0) or completes (0) a buffered channel after the first <paramref name="batches"/> batches of the writer.</summary>
    void EndAfter(int id, int writer, long batches, int strength);

    /// <summary>Syncs on a barrier: completes when every enrolled process has synced.</summary>
    Task SyncAsync(int id);

    /// <summary>Enrolls one more process on a barrier.</summary>
    void Enroll(int id);

    /// <summary>Resigns one process from a barrier.</summary>
    void Resign(int id);

    /// <summary>Falls into a bucket: completes when the bucket is flushed.</summary>
    Task FallIntoAsync(int id);

    /// <summary>Flushes a bucket; returns how many processes it released.</summary>
    int Flush(int id);

    /// <summary>How many processes wait in a bucket.</summary>
    int Holding(int id);
}

/// <summary>A word-sized value read from a channel, or the strength of its poison.</summary>
/// <param name="Word">The value's bytes, little-endian, zero-filled past its size.</param>
/// <param name="Poison">0 when a value was read, the poison strength when the channel is poisoned, -1 when it is completed.</param>
internal record struct WordRead(long Word, int Poison);

/// <summary>A remote writer's id and the credits granted to it, or the channel's end status.</summary>
/// <param name="Writer">The writer's id; -1 for a channel without a buffer.</param>
/// <param name="Credits">Values the writer may now write without waiting.</param>
/// <param name="Poison">0 while the channel is open, else as for <see cref="WordRead.Poison"/>.</param>
internal record struct WriterGrant(int Writer, int Credits, int Poison);

/// <summary>A value read from a channel as its codec wrote it, or the strength of its poison.</summary>
/// <param name="Value">The marshalled value (empty when poisoned).</param>
/// <param name="Poison">0 when a value was read, the poison strength when the channel is poisoned, -1 when it is completed.</param>
internal sealed record BytesRead(byte[] Value, int Poison);
