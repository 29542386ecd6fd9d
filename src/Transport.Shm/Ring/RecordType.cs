namespace XCall.Transport.Shm.Ring;

/// <summary>The type word of a ring record (docs/remoting.md, "Shared-memory rings").</summary>
internal enum RecordType
{
    /// <summary>Skip to the end of the lap: the next record did not fit before the end of the data area.</summary>
    Padding = 1,

    /// <summary>
    /// First record of a frame: the 24-byte <see cref="FrameHeader"/>, the payload's total length (int32; -1
    /// when the frame is streamed and its length is not known yet), a reserved int32, then payload bytes.
    /// </summary>
    FrameStart = 2,

    /// <summary>More payload bytes of the frame in progress.</summary>
    FrameChunk = 3,

    /// <summary>Last payload bytes of a streamed frame (possibly none): the frame is complete.</summary>
    FrameEnd = 4,

    /// <summary>The streamed frame in progress was abandoned by its writer; the reader drops it.</summary>
    FrameAbort = 5,

    /// <summary>The writer closes the connection in an orderly way; nothing follows.</summary>
    Goodbye = 6,
}
