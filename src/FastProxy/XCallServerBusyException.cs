namespace XCall;

/// <summary>
/// The peer refused the call without running any of it: the connection already had as many calls queued or
/// running there as the peer admits (its <see cref="ConnectionOptions.MaxConcurrentCalls"/> or
/// <see cref="ConnectionOptions.MaxConcurrentArgumentBytes"/>). It is safe to retry the call, best once some
/// of this side's calls in flight on the connection have completed. The connection stays usable.
/// </summary>
public sealed class XCallServerBusyException : XCallException
{
    /// <summary>The type name a refusal's error record carries (its frame marks it as the runtime's, see <see cref="Runtime.RemoteError.NotRun"/>).</summary>
    internal const string WireTypeName = "XCall.XCallServerBusyException";

    /// <summary>Creates the exception for a call to <paramref name="method"/> that <paramref name="endpoint"/> refused, and why.</summary>
    public XCallServerBusyException(string endpoint, string method, string reason)
        : base($"Call {method} to {endpoint} was refused and not run, so it is safe to retry: {reason}.")
    {
        Endpoint = endpoint;
        Reason = reason;
    }

    /// <summary>The address of the peer that refused the call.</summary>
    public string Endpoint { get; }

    /// <summary>Why, as the peer put it: which of its limits the connection had reached, and its value.</summary>
    public string Reason { get; }
}
