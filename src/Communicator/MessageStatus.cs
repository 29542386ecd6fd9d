namespace XCall.Communicator;

/// <summary>What a receive or a probe found: the sender's rank in the communicator, the tag, and the message's length in bytes.</summary>
/// <param name="Source">The sender's rank in the communicator the message was received on.</param>
/// <param name="Tag">The message's tag.</param>
/// <param name="ByteCount">The message's length in bytes.</param>
public readonly record struct MessageStatus(int Source, int Tag, int ByteCount)
{
    /// <summary>How many values of <typeparamref name="T"/> the message holds (its bytes divided by the size of one, rounded down).</summary>
    public unsafe int Count<T>() where T : unmanaged => ByteCount / sizeof(T);
}
