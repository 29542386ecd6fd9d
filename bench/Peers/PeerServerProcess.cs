namespace XCall.Bench.Peers;

/// <summary>
/// A peer server process: the benchmark program started again with
/// <c>--serve-grpc</c> or <c>--serve-jsonrpc</c>, which its Main hands to <see cref="PeerServers.Run"/>.
/// </summary>
internal sealed class PeerServerProcess : IDisposable
{
    private readonly ChildServer _child;
    private readonly string? _socketPath;

    private PeerServerProcess(ChildServer child, string? socketPath)
    {
        _child = child;
        _socketPath = socketPath;
    }

    /// <summary><c>http://127.0.0.1:PORT</c> for TCP, the socket's path for a Unix domain socket.</summary>
    public string Address => _child.Address;

    /// <param name="flag"><c>--serve-grpc</c> or <c>--serve-jsonrpc</c>.</param>
    /// <param name="transport"><c>tcp</c> or <c>uds</c>.</param>
    public static PeerServerProcess Start(string flag, string transport)
    {
        string? socketPath = transport == "uds"
            ? Path.Combine(Path.GetTempPath(), $"xcall-peer-{Environment.ProcessId}-{Guid.NewGuid().ToString("N")[..8]}.sock")
            : null;
        ChildServer child = ChildServer.Start([flag, transport, socketPath ?? "127.0.0.1:0"],
            $"The peer server '{flag} {transport}' (does Main hand --serve-grpc/--serve-jsonrpc to PeerServers.Run?)");
        return new PeerServerProcess(child, socketPath);
    }

    public void Dispose()
    {
        _child.Dispose();
        if (_socketPath is not null)
        {
            File.Delete(_socketPath);
        }
    }
}
