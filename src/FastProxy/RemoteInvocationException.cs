namespace XCall;

/// <summary>
/// The remote method threw. Carries the remote exception's type name, message and stack text as strings:
/// the remote type is never created from the name that came over the wire.
/// </summary>
public sealed class RemoteInvocationException : XCallException
{
    /// <summary>Creates the exception from what the remote side reported.</summary>
    public RemoteInvocationException(string remoteTypeName, string remoteMessage, string? remoteStackTrace)
        : base($"{remoteTypeName}: {remoteMessage}")
    {
        RemoteTypeName = remoteTypeName;
        RemoteMessage = remoteMessage;
        RemoteStackTrace = remoteStackTrace;
    }

    /// <summary>Full name of the exception type thrown on the remote side.</summary>
    public string RemoteTypeName { get; }

    /// <summary>The remote exception's message.</summary>
    public string RemoteMessage { get; }

    /// <summary>The remote exception's stack trace text, if it had one.</summary>
    public string? RemoteStackTrace { get; }

    /// <inheritdoc/>
    public override string? StackTrace =>
        RemoteStackTrace is null ? base.StackTrace : $"{RemoteStackTrace}{Environment.NewLine}--- End of remote stack trace ---{Environment.NewLine}{base.StackTrace}";
}
