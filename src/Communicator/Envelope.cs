namespace XCall.Communicator;

/// <summary>A message that arrived before a receive matched it, held by the <see cref="Mailbox"/>.</summary>
/// <remarks>A large message is held in an array rented from <see cref="System.Buffers.ArrayPool{T}.Shared"/> (<see cref="Pooled"/>),
/// which may be longer than the message and goes back to the pool once a receive copied it out.
/// A lent message (<see cref="Lent"/>) holds no bytes: they stay in the sender's memory until a receive takes it.</remarks>
internal sealed class Envelope(int source, long context, int tag, byte[] data, TaskCompletionSource? matched, int length = -1, bool pooled = false)
{
    /// <summary>A lent message of a sender on this node, whose bytes a receive copies from the sender's memory.</summary>
    public Envelope(int source, long context, Eager.LentMessage lent)
        : this(source, context, lent.Tag, [], null, lent.Length) => Lent = lent;

    /// <summary>The sender's world rank.</summary>
    public int Source { get; } = source;

    public long Context { get; } = context;

    public int Tag { get; } = tag;

    /// <summary>The message's bytes (its first <see cref="Length"/>), owned by the envelope.</summary>
    public byte[] Data { get; } = data;

    /// <summary>The message's length in bytes.</summary>
    public int Length { get; } = length < 0 ? data.Length : length;

    /// <summary>Whether <see cref="Data"/> is rented from the shared pool.</summary>
    public bool Pooled { get; } = pooled;

    /// <summary>Where the bytes of a lent message are; null for a message whose bytes the envelope holds.</summary>
    public Eager.LentMessage? Lent { get; }

    /// <summary>Completed when a receive takes the message (the sender's <c>SendSync</c> waits on it); null for a plain send.</summary>
    public TaskCompletionSource? Matched { get; } = matched;
}
