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
    /// <summary>Writes a word-sized value; returns when the channel took it (for an unbuffered channel: when a reader did).</summary>
    int WriteWord(int id, long word);

    /// <summary>The async form of <see cref="WriteWord"/>; cancelling it withdraws the value unless it was taken.</summary>
    ValueTask<int> WriteWordAsync(int id, long word, CancellationToken cancellationToken);

    /// <summary>Writes a value marshalled by the channel's codec.</summary>
    int WriteBytes(int id, byte[] value);

    /// <summary>The async form of <see cref="WriteBytes"/>.</summary>
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

/// <summary>A value read from a channel as its codec wrote it, or the strength of its poison.</summary>
/// <param name="Value">The marshalled value (empty when poisoned).</param>
/// <param name="Poison">0 when a value was read, the poison strength when the channel is poisoned, -1 when it is completed.</param>
internal sealed record BytesRead(byte[] Value, int Poison);
