namespace XCall.Hosting;

/// <summary>The server of <see cref="XCallServiceCollectionExtensions.AddXCallServer"/>, bound from the configuration section <c>XCall:Server</c>.</summary>
public sealed class XCallServerOptions
{
    /// <summary>The addresses served (<c>shm://name</c>, <c>tcp://host:port/name</c>), e.g. <c>XCall:Server:Addresses:0</c>.</summary>
    public IList<string> Addresses { get; } = [];

    /// <summary>A TCP address also serves its name over shared memory, as <see cref="RemoteOptions.ServeSharedMemoryToo"/> (default on).</summary>
    public bool ServeSharedMemoryToo { get; set; } = true;
}
