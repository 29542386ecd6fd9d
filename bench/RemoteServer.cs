using System.Diagnostics;

namespace XCall.Bench;

/// <summary>
/// The server side of the shm and tcp rows: this program started again with <c>--serve ADDRESS</c>, in
/// its own process, serving <see cref="ICallCost"/>, <see cref="IThroughput"/> and <see cref="IStreamCost"/> with the default dispatch
/// (<see cref="DispatchMode.Concurrent"/>), or inline dispatch where a row says so.
/// </summary>
internal sealed class RemoteServer : IDisposable
{
    private readonly ChildServer _child;

    private RemoteServer(ChildServer child) => _child = child;

    public string Address => _child.Address;

    /// <summary>The server process, to read its CPU time.</summary>
    public Process Process => _child.Process;

    public static RemoteOptions Options { get; } = new()
    {
        Connection = ConnectionOptions.Default,
        ServeSharedMemoryToo = false,
        // 4 MiB per direction, so the byte[1MiB] row's frame fits in the ring and is read in place; with the
        // default 1 MiB ring it streams through in chunks and is gathered first (one copy more).
        Shm = new Transport.Shm.ShmOptions { RingSize = 4 << 20 },
        PreferSharedMemory = false,
    };

    private static readonly Dictionary<string, RemoteServer> s_shared = [];

    /// <summary>
    /// One warm server process per transport for the whole run: every benchmark case talks to the same
    /// process, so no case measures a freshly started, not yet optimised server. Disposed by <see cref="StopShared"/>.
    /// </summary>
    public static RemoteServer Shared(string transport, bool inline = false)
    {
        lock (s_shared)
        {
            string key = inline ? transport + "+inline" : transport;
            if (!s_shared.TryGetValue(key, out RemoteServer? server) || server.Process.HasExited)
            {
                server = Start(transport, inline);
                s_shared[key] = server;
            }
            return server;
        }
    }

    /// <summary>Stops the shared server processes.</summary>
    public static void StopShared()
    {
        lock (s_shared)
        {
            foreach (RemoteServer server in s_shared.Values)
            {
                server.Dispose();
            }
            s_shared.Clear();
        }
    }

    /// <summary>
    /// Starts a server process: with <paramref name="inline"/>, <see cref="DispatchMode.Inline"/>; with
    /// <paramref name="noOptions"/>, no option set at all (<see cref="Options"/> only where a tcp address needs it).
    /// </summary>
    public static RemoteServer Start(string transport, bool inline = false, bool noOptions = false)
    {
        string name = $"xcall-bench-{Environment.ProcessId}-{Guid.NewGuid().ToString("N")[..6]}";
        string address = transport == "shm" ? $"shm://{name}" : $"tcp://127.0.0.1:0/{name}";
        string[] args = ["--serve", address, .. inline ? ["--inline"] : Array.Empty<string>(), .. noOptions ? ["--no-options"] : Array.Empty<string>()];
        return new RemoteServer(ChildServer.Start(args, $"The benchmark server for {address}"));
    }

    /// <summary>Entry point of the server process.</summary>
    public static int Serve(string address, bool inline, bool noOptions)
    {
        // The default dispatch unless a row asks for inline dispatch (whose methods cannot call back synchronously).
        ConnectionOptions connection = inline ? Options.Connection with { DispatchMode = DispatchMode.Inline } : Options.Connection;
        RemoteOptions options = !noOptions ? Options with { Connection = connection }
            : address.StartsWith("tcp:", StringComparison.Ordinal) ? new RemoteOptions { ServeSharedMemoryToo = false } // else a local client would take shm
            : new RemoteOptions();
        using var server = new XCallServer(noOptions ? null : connection)
            .Add<ICallCost>(new DerivedCallCostService())
            .Add<IThroughput>(new ThroughputService())
            .Add<IStreamCost>(new StreamCostService());
        using RemoteListener listener = Remote.Serve(address, server, options);
        Console.WriteLine($"READY {(object?)listener.TcpAddress ?? address}");
        Console.Out.Flush();
        while (Console.In.ReadLine() is string line)
        {
            if (line == "alloc")
            {
                Console.WriteLine($"ALLOC {GC.GetTotalAllocatedBytes(precise: true)}");
                Console.Out.Flush();
            }
        }
        return 0;
    }

    /// <summary>Bytes the server process allocated so far (all threads), asked over its standard input.</summary>
    public long AllocatedBytes() => long.Parse(_child.Ask("alloc", "ALLOC "), System.Globalization.CultureInfo.InvariantCulture);

    public void Dispose() => _child.Dispose();
}
