namespace XCall;

/// <summary>
/// Raised when bytes read from a peer do not form a valid XCall frame or payload: a length past the end
/// of the data or beyond a configured <see cref="Marshal.MarshalLimits"/> value, an unknown tag, a
/// truncated value, an object nested deeper than allowed. The connection that carried the bytes is
/// closed; nothing else is affected. Malformed input never raises anything else.
/// </summary>
public sealed class XCallProtocolException : XCallException
{
    /// <summary>Creates a protocol error with a message that says what was wrong.</summary>
    public XCallProtocolException(string message) : base(message) { }

    /// <summary>Creates a protocol error with a message and the exception that revealed it (raised by a registered marshaller).</summary>
    public XCallProtocolException(string message, Exception? inner) : base(message, inner) { }
}
