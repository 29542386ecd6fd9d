using XCall.Transport.Shm;
using XCall.Transport.Tcp;

namespace XCall;

/// <summary>Settings for <see cref="Remote"/>: the connection's and each transport's.</summary>
public sealed record RemoteOptions
{
    /// <summary>The defaults.</summary>
    public static RemoteOptions Default { get; } = new();

    /// <summary>
    /// Call timeout, dispatch mode and payload limits of the connection <see cref="Remote.Open{T}"/> makes.
    /// Connections a server accepts take theirs from the <see cref="XCallServer"/> (its constructor), not from
    /// the options given to <see cref="Remote.Serve"/>.
    /// </summary>
    public ConnectionOptions Connection { get; init; } = ConnectionOptions.Default;

    /// <summary>Shared-memory settings (ring size, idle strategy, allowed peers).</summary>
    public ShmOptions Shm { get; init; } = ShmOptions.Default;

    /// <summary>TCP settings (timeouts, heartbeat, TLS, pre-shared key).</summary>
    public TcpOptions Tcp { get; init; } = new();

    /// <summary>
    /// When a <c>tcp://</c> address names this machine and a shared-memory server of the same name is
    /// listening, use shared memory instead of TCP. Default true.
    /// </summary>
    public bool PreferSharedMemory { get; init; } = true;

    /// <summary>After a lost link, the next call reconnects (shm and tcp). Default true.</summary>
    public bool Reconnect { get; init; } = true;

    /// <summary>Wait after the first failed reconnect attempt; doubles after each failure. Default 100 ms.</summary>
    public TimeSpan ReconnectBackoff { get; init; } = TimeSpan.FromMilliseconds(100);

    /// <summary>Longest wait between reconnect attempts. Default 5 s.</summary>
    public TimeSpan MaxReconnectBackoff { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>A TCP server also listens on shared memory under its name, for clients on its machine. Default true.</summary>
    public bool ServeSharedMemoryToo { get; init; } = true;
}
