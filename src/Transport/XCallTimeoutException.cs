namespace XCall;

/// <summary>
/// A call got no reply within its timeout (the remote side was asked to cancel it), or its frame could not
/// be sent within it (the peer stopped taking data).
/// </summary>
public sealed class XCallTimeoutException : XCallException
{
    /// <summary>Creates the exception for a call that got no reply in time.</summary>
    public XCallTimeoutException(string endpoint, string method, TimeSpan timeout)
        : base($"Call {method} to {endpoint} got no reply within {timeout.TotalMilliseconds:0} ms.") { }

    /// <summary>Creates the exception for a frame that could not be sent in time.</summary>
    public XCallTimeoutException(string endpoint, string reason)
        : base($"Sending to {endpoint} timed out: {reason}.") { }
}
