using XCall.Transport.Shm.Rendezvous;

namespace XCall.Transport.Shm;

/// <summary>
/// Entry points of the shared-memory transport (<c>shm://name</c>): processes of one machine exchange frames
/// through rings in a shared segment, found through a Unix socket in a per-user runtime directory.
/// </summary>
public static class ShmTransport
{
    /// <summary>The address scheme of this transport.</summary>
    public const string Scheme = "shm";

    /// <summary>
    /// Starts serving <paramref name="name"/>: binds <c>&lt;RuntimeDirectory&gt;/&lt;name&gt;.sock</c> (replacing
    /// a stale socket left by a dead server).
    /// </summary>
    /// <exception cref="IOException">A live server already serves <paramref name="name"/>.</exception>
    /// <exception cref="UnauthorizedAccessException">The runtime directory is not private to this user.</exception>
    public static ShmListener Listen(string name, ShmOptions? options = null)
    {
        options ??= ShmOptions.Default;
        options.Validate();
        RuntimeDirectory.ValidateName(name, options);
        return ShmListener.Open(name, options);
    }

    /// <summary>Connects to the server of <paramref name="name"/> on this machine.</summary>
    /// <exception cref="XCallDisconnectedException">No server listens, or the handshake failed or timed out.</exception>
    /// <exception cref="ShmPeerRefusedException">The server refused this user, or runs as a user we do not allow.</exception>
    public static FrameChannel Connect(string name, ShmOptions? options = null)
    {
        options ??= ShmOptions.Default;
        options.Validate();
        RuntimeDirectory.ValidateName(name, options);
        return Handshake.Connect(name, options, CancellationToken.None);
    }

    /// <summary>Connects to the server of <paramref name="name"/> without blocking the calling thread.</summary>
    /// <exception cref="XCallDisconnectedException">No server listens, or the handshake failed or timed out.</exception>
    /// <exception cref="ShmPeerRefusedException">The server refused this user, or runs as a user we do not allow.</exception>
    public static Task<FrameChannel> ConnectAsync(string name, ShmOptions? options = null, CancellationToken cancellationToken = default)
    {
        options ??= ShmOptions.Default;
        options.Validate();
        RuntimeDirectory.ValidateName(name, options);
        return Task.Run<FrameChannel>(() => Handshake.Connect(name, options, cancellationToken), cancellationToken);
    }
}
