namespace XCall.Parallel;

/// <summary>
/// A one-way call on a parallel object threw on its host. It is thrown by the caller's next synchronous call on
/// that object (which is then not sent) and raised through <see cref="ParallelWorld.OneWayCallFailed"/>.
/// </summary>
public sealed class OneWayCallFailedException : XCallException
{
    /// <summary>Creates the exception for a failed one-way call of <paramref name="method"/> on object <paramref name="objectId"/>.</summary>
    public OneWayCallFailedException(ulong objectId, string method, string exceptionType, string remoteMessage)
        : base($"The one-way call {method} on parallel object {objectId} threw {exceptionType}: {remoteMessage}") =>
        (ObjectId, Method, ExceptionType, RemoteMessage) = (objectId, method, exceptionType, remoteMessage);

    /// <summary>The object's id on its host.</summary>
    public ulong ObjectId { get; }

    /// <summary>The method that threw.</summary>
    public string Method { get; }

    /// <summary>The full name of the type of the exception the method threw.</summary>
    public string ExceptionType { get; }

    /// <summary>That exception's message.</summary>
    public string RemoteMessage { get; }
}
