namespace XCall.Transport.Shm;

/// <summary>
/// A shared-memory connection was refused because of who the peer is: the server did not accept this
/// process's user id, or the server runs as a user id this side does not allow (SO_PEERCRED check).
/// </summary>
public sealed class ShmPeerRefusedException : UnauthorizedAccessException
{
    /// <summary>Creates the exception for <paramref name="endpoint"/>.</summary>
    public ShmPeerRefusedException(string endpoint, string reason)
        : base($"Connection to {endpoint} refused: {reason}") => Endpoint = endpoint;

    /// <summary>The address of the peer, e.g. <c>shm://calc</c>.</summary>
    public string Endpoint { get; }
}
