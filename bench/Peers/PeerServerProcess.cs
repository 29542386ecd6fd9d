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

    /// <summary><c>http://127.0.0.1:PORT</c> for TCP, the socket's path for a Unix domain socket, the <c>shm://</c> address for XCall.</summary>
    public string Address => _child.Address;

    /// <summary>The server process's id.</summary>
    public int ProcessId => _child.Process.Id;

    /// <param name="flag"><c>--serve-grpc</c> or <c>--serve-jsonrpc</c>.</param>
    /// <param name="transport"><c>tcp</c>, <c>uds</c> or <c>xcall-shm</c>.</param>
    public static PeerServerProcess Start(string flag, string transport)
    {
        string? socketPath = transport == "uds"
            ? Path.Combine(Path.GetTempPath(), $"xcall-peer-{Environment.ProcessId}-{Guid.NewGuid().ToString("N")[..8]}.sock")
            : null;
        string endpoint = transport switch
        {
            "uds" => socketPath!,
            "xcall-shm" => $"shm://xcall-peer-{Environment.ProcessId}-{Guid.NewGuid().ToString("N")[..8]}",
            _ => "127.0.0.1:0",
        };
        ChildServer child = ChildServer.Start([flag, transport, endpoint],
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
