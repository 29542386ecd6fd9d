namespace XCall.Transport;

/// <summary>What a frame carries (docs/remoting.md, "Frame format").</summary>
public enum FrameKind : byte
{
    /// <summary>A call that expects a reply.</summary>
    Call = 1,

    /// <summary>A call with no reply ([OneWay]).</summary>
    OneWay = 2,

    /// <summary>The successful result of a call: return value, then ref / out values.</summary>
    Reply = 3,

    /// <summary>The call failed on the remote side: remote type name, message, stack text.</summary>
    Error = 4,

    /// <summary>Cancel the call with this call id.</summary>
    Cancel = 5,

    /// <summary>The sender drops its reference to the object with this object id.</summary>
    Release = 6,

    /// <summary>Connection handshake: protocol version and contract hashes.</summary>
    Hello = 7,

    /// <summary>Liveness probe; the peer answers with <see cref="Pong"/>.</summary>
    Ping = 8,

    /// <summary>Answer to <see cref="Ping"/>.</summary>
    Pong = 9,

    /// <summary>Orderly close.</summary>
    Goodbye = 10,
}
