namespace XCall;

/// <summary>A call got no reply within its timeout; the remote side was asked to cancel it.</summary>
public sealed class XCallTimeoutException : XCallException
{
    /// <summary>Creates the exception.</summary>
    public XCallTimeoutException(string endpoint, string method, TimeSpan timeout)
        : base($"Call {method} to {endpoint} got no reply within {timeout.TotalMilliseconds:0} ms.") { }
}
