namespace XCall;

/// <summary>Settings of one connection, shared by every transport.</summary>
public sealed record ConnectionOptions
{
    /// <summary>The defaults.</summary>
    public static ConnectionOptions Default { get; } = new();

    /// <summary>How long a call waits for its reply before it fails with <see cref="XCallTimeoutException"/>. Default infinite.</summary>
    public TimeSpan CallTimeout { get; init; } = Timeout.InfiniteTimeSpan;

    /// <summary>Where received calls run. Default <see cref="DispatchMode.Concurrent"/>.</summary>
    public DispatchMode DispatchMode { get; init; } = DispatchMode.Concurrent;

    /// <summary>Limits applied to every payload read from the peer.</summary>
    public Marshal.MarshalLimits Limits { get; init; } = Marshal.MarshalLimits.Default;
}
