namespace XCall.Hosting;

/// <summary>
/// A client registered with <see cref="XCallServiceCollectionExtensions.AddXCallClient{T}"/>, bound from the
/// configuration section <c>XCall:Clients:&lt;interface name&gt;</c> (e.g. <c>XCall:Clients:ICalc:Address</c>).
/// </summary>
public sealed class XCallClientOptions
{
    /// <summary>The server's address: <c>shm://name</c>, <c>tcp://host:port/name</c> or <c>domain://name</c>.</summary>
    public string? Address { get; set; }

    /// <summary>Reconnect after a lost link, as <see cref="RemoteOptions.Reconnect"/> (default on).</summary>
    public bool Reconnect { get; set; } = true;

    /// <summary>Use shared memory for a TCP address of this machine whose server also serves it (default on).</summary>
    public bool PreferSharedMemory { get; set; } = true;
}
