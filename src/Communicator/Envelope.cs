namespace XCall.Communicator;

/// <summary>A message that arrived before a receive matched it, held by the <see cref="Mailbox"/>.</summary>
internal sealed class Envelope(int source, long context, int tag, byte[] data, TaskCompletionSource? matched)
{
    /// <summary>The sender's world rank.</summary>
    public int Source { get; } = source;

    public long Context { get; } = context;

    public int Tag { get; } = tag;

    /// <summary>The message's bytes, owned by the envelope.</summary>
    public byte[] Data { get; } = data;

    /// <summary>Completed when a receive takes the message (the sender's <c>SendSync</c> waits on it); null for a plain send.</summary>
    public TaskCompletionSource? Matched { get; } = matched;
}
