namespace XCall;

/// <summary>The state of a <see cref="RemoteService{T}"/>'s link to its server.</summary>
public enum ConnectionState
{
    /// <summary>Connected; calls flow.</summary>
    Connected,

    /// <summary>The link is lost; calls in flight failed, the next call tries to reconnect (after the backoff).</summary>
    Disconnected,

    /// <summary>Closed by the user; nothing reconnects.</summary>
    Closed,
}
