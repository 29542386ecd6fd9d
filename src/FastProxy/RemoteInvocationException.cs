namespace XCall;

/// <summary>
/// The remote method threw. Carries the remote exception's type name, message, stack text, inner
/// exceptions and string <see cref="Exception.Data"/> entries as strings: the remote type is never created
/// from the name that came over the wire. <see cref="ToLocalException"/> re-creates a small fixed set of
/// framework exceptions as their own type, for callers that want to catch those.
/// </summary>
public sealed class RemoteInvocationException : XCallException
{
    /// <summary>The <see cref="Exception.Data"/> key under which a re-created exception keeps the remote stack text.</summary>
    public const string RemoteStackTraceKey = "XCall.RemoteStackTrace";

    /// <summary>Creates the exception from what the remote side reported.</summary>
    public RemoteInvocationException(string remoteTypeName, string remoteMessage, string? remoteStackTrace)
        : this(remoteTypeName, remoteMessage, remoteStackTrace, [], null)
    {
    }

    /// <summary>Creates the exception from what the remote side reported, with its inner exceptions and data entries.</summary>
    public RemoteInvocationException(
        string remoteTypeName,
        string remoteMessage,
        string? remoteStackTrace,
        IReadOnlyList<RemoteInvocationException> innerExceptions,
        IEnumerable<KeyValuePair<string, string?>>? data)
        : base($"{remoteTypeName}: {remoteMessage}", innerExceptions.Count > 0 ? innerExceptions[0] : null)
    {
        RemoteTypeName = remoteTypeName;
        RemoteMessage = remoteMessage;
        RemoteStackTrace = remoteStackTrace;
        InnerExceptions = innerExceptions;
        if (data is not null)
        {
            foreach (KeyValuePair<string, string?> entry in data)
            {
                Data[entry.Key] = entry.Value;
            }
        }
    }

    /// <summary>Full name of the exception type thrown on the remote side.</summary>
    public string RemoteTypeName { get; }

    /// <summary>The remote exception's message.</summary>
    public string RemoteMessage { get; }

    /// <summary>The remote exception's stack trace text, if it had one.</summary>
    public string? RemoteStackTrace { get; }

    /// <summary>
    /// The remote exception's inner exceptions, in order: its <see cref="Exception.InnerException"/>, or every
    /// exception of an <see cref="AggregateException"/>. The first is also <see cref="Exception.InnerException"/>.
    /// </summary>
    public IReadOnlyList<RemoteInvocationException> InnerExceptions { get; }

    /// <inheritdoc/>
    public override string? StackTrace =>
        RemoteStackTrace is null ? base.StackTrace : $"{RemoteStackTrace}{Environment.NewLine}--- End of remote stack trace ---{Environment.NewLine}{base.StackTrace}";

    /// <summary>
    /// The remote exception as its own type when it is one of <see cref="ArgumentException"/>,
    /// <see cref="ArgumentNullException"/>, <see cref="ArgumentOutOfRangeException"/>,
    /// <see cref="InvalidOperationException"/>, <see cref="KeyNotFoundException"/>,
    /// <see cref="NotSupportedException"/>, <see cref="TimeoutException"/> or
    /// <see cref="OperationCanceledException"/> (exactly, not a subclass; a fixed list, nothing is created
    /// from a name): same message and data entries, the remote stack text under
    /// <see cref="RemoteStackTraceKey"/>, and this exception as its inner exception. Otherwise this exception.
    /// </summary>
    public Exception ToLocalException()
    {
        Exception? local = RemoteTypeName switch
        {
            "System.ArgumentException" => new ArgumentException(RemoteMessage, this),
            "System.ArgumentNullException" => new ArgumentNullException(RemoteMessage, this),
            "System.ArgumentOutOfRangeException" => new ArgumentOutOfRangeException(RemoteMessage, this),
            "System.InvalidOperationException" => new InvalidOperationException(RemoteMessage, this),
            "System.Collections.Generic.KeyNotFoundException" => new KeyNotFoundException(RemoteMessage, this),
            "System.NotSupportedException" => new NotSupportedException(RemoteMessage, this),
            "System.TimeoutException" => new TimeoutException(RemoteMessage, this),
            "System.OperationCanceledException" => new OperationCanceledException(RemoteMessage, this),
            _ => null,
        };
        if (local is null)
        {
            return this;
        }
        foreach (System.Collections.DictionaryEntry entry in Data)
        {
            local.Data[entry.Key] = entry.Value;
        }
        local.Data[RemoteStackTraceKey] = RemoteStackTrace;
        return local;
    }
}
