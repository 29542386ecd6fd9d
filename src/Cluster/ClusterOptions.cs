namespace XCall.Cluster;

/// <summary>Settings for <see cref="ClusterWorld.JoinAsync"/>.</summary>
public sealed record ClusterOptions
{
    /// <summary>The defaults.</summary>
    public static ClusterOptions Default { get; } = new();

    /// <summary>Who this process is; null reads the process's environment (<see cref="WorldEnvironment.Detect()"/>).</summary>
    public WorldEnvironment? Environment { get; init; }

    /// <summary>
    /// The services this rank offers its peers, served from the moment it joins (so no peer finds them missing);
    /// null serves an empty server. The world disposes it when it is disposed.
    /// </summary>
    public XCallServer? Services { get; init; }

    /// <summary>How long joining waits for rank 0's store and for every rank to join. Default 60 s.</summary>
    public TimeSpan JoinTimeout { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>How long disposing the world waits for the other ranks to end theirs. Default 30 s.</summary>
    public TimeSpan LeaveTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The host this rank's TCP server binds to and publishes; null takes <see cref="WorldEnvironment.Host"/>, else
    /// loopback when the world is on one node, else this machine's host name (bound on every interface).
    /// </summary>
    public string? Host { get; init; }

    /// <summary>Settings of the connections the world opens and serves (transports' options; reconnects are always off).</summary>
    public RemoteOptions Remote { get; init; } = RemoteOptions.Default;
}
