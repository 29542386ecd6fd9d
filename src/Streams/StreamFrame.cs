namespace XCall.Streams;

/// <summary>
/// The frames of a byte stream, all <see cref="Transport.FrameKind.OneWay"/> with call id and object id 0, told
/// apart by <see cref="Transport.FrameHeader.MethodId"/> (docs/remoting.md, "Streams").
/// </summary>
internal static class StreamFrame
{
    /// <summary>Payload: 1 to <see cref="MaxChunk"/> bytes of the stream, no more than the receiver granted.</summary>
    public const uint Data = 1;

    /// <summary>Payload: an 8-byte little-endian count, positive: the receiver takes that many more bytes.</summary>
    public const uint Credit = 2;

    /// <summary>No payload: the sender writes no more (half-close); the receiver reads end of stream.</summary>
    public const uint EndOfData = 3;

    /// <summary>The largest data frame: a write larger than this goes out in several frames.</summary>
    public const int MaxChunk = 64 * 1024;
}
