namespace XCall.Marshal;

/// <summary>
/// More bytes of a message that did not fit in one contiguous span: a transport that streams a large
/// message through a ring in chunks hands the reader the next chunk when it asks.
/// </summary>
public interface IMarshalInput
{
    /// <summary>Releases the chunk the reader has finished with and returns the next one; an empty span
    /// means the message has no more bytes.</summary>
    ReadOnlySpan<byte> NextChunk();
}
