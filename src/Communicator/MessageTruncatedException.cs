namespace XCall.Communicator;

/// <summary>
/// A matched message was longer than the receive's buffer (MPI's <c>MPI_ERR_TRUNCATE</c>). The message is consumed
/// and dropped; the buffer holds no part of it.
/// </summary>
public sealed class MessageTruncatedException : XCallException
{
    /// <summary>Creates the exception for a message of <paramref name="messageBytes"/> and a buffer of <paramref name="bufferBytes"/>.</summary>
    public MessageTruncatedException(int source, int tag, int messageBytes, int bufferBytes)
        : base($"The message from rank {source} with tag {tag} has {messageBytes} bytes; the receive's buffer holds {bufferBytes}.")
    {
        MessageBytes = messageBytes;
        BufferBytes = bufferBytes;
    }

    /// <summary>The message's length in bytes.</summary>
    public int MessageBytes { get; }

    /// <summary>The buffer's length in bytes.</summary>
    public int BufferBytes { get; }
}
