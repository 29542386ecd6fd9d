namespace XCall.Marshal;

/// <summary>
/// More bytes of a message that did not fit in one contiguous span: a transport that streams a large
/// message through a ring in chunks hands the reader the next chunk when it asks.
/// </summary>
public interface IMarshalInput
{
    /// <summary>Returns the next chunk; an empty span means the message has no more bytes. Every chunk stays
    /// readable until the message's handler returns (readers hand out spans into it, see
    /// <see cref="MarshalReader.ReadSpanInPlace{T}"/>).</summary>
    ReadOnlySpan<byte> NextChunk();
}
