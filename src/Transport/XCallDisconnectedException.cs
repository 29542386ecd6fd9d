namespace XCall;

/// <summary>The connection to the peer is gone (the peer closed it, died, or stopped answering); the call's outcome is unknown.</summary>
public sealed class XCallDisconnectedException : XCallException
{
    /// <summary>Creates the exception for <paramref name="endpoint"/>.</summary>
    public XCallDisconnectedException(string endpoint, string reason, Exception? inner = null)
        : base($"Connection to {endpoint} lost: {reason}", inner)
    {
        Endpoint = endpoint;
        Reason = reason;
    }

    private XCallDisconnectedException(XCallDisconnectedException original)
        : base(original.Message, original.InnerException)
    {
        Endpoint = original.Endpoint;
        Reason = original.Reason;
    }

    /// <summary>
    /// The same failure as a new instance: each caller that fails with it throws its own object (one instance
    /// thrown on many threads at once gets its stack trace overwritten by each of them).
    /// </summary>
    public XCallDisconnectedException Copy() => new(this);

    /// <summary>The address of the peer that is gone.</summary>
    public string Endpoint { get; }

    /// <summary>Why, without the "Connection to ... lost" that <see cref="Exception.Message"/> starts with.</summary>
    public string Reason { get; }
}
