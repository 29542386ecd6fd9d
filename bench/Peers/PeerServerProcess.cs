using System.Diagnostics;
using System.Reflection;

namespace XCall.Bench.Peers;

/// <summary>
/// A peer server process: the running benchmark program (its entry assembly) started again with
/// <c>--serve-grpc</c> or <c>--serve-jsonrpc</c>, which its Main hands to <see cref="PeerServers.Run"/>.
/// </summary>
internal sealed class PeerServerProcess : IDisposable
{
    private readonly Process _process;
    private readonly string? _socketPath;

    private PeerServerProcess(Process process, string address, string? socketPath)
    {
        _process = process;
        Address = address;
        _socketPath = socketPath;
    }

    /// <summary><c>http://127.0.0.1:PORT</c> for TCP, the socket's path for a Unix domain socket.</summary>
    public string Address { get; }

    /// <param name="flag"><c>--serve-grpc</c> or <c>--serve-jsonrpc</c>.</param>
    /// <param name="transport"><c>tcp</c> or <c>uds</c>.</param>
    public static PeerServerProcess Start(string flag, string transport)
    {
        string? socketPath = transport == "uds"
            ? Path.Combine(Path.GetTempPath(), $"xcall-peer-{Environment.ProcessId}-{Guid.NewGuid().ToString("N")[..8]}.sock")
            : null;
        string program = (Assembly.GetEntryAssembly() ?? typeof(PeerServerProcess).Assembly).Location;
        var info = new ProcessStartInfo("dotnet") { RedirectStandardInput = true, RedirectStandardOutput = true, UseShellExecute = false };
        info.ArgumentList.Add(program);
        info.ArgumentList.Add(flag);
        info.ArgumentList.Add(transport);
        info.ArgumentList.Add(socketPath ?? "127.0.0.1:0");
        Process process = Process.Start(info)!;
        string? line;
        while ((line = process.StandardOutput.ReadLine()) is not null)
        {
            if (line.StartsWith("READY ", StringComparison.Ordinal))
            {
                return new PeerServerProcess(process, line[6..].Trim(), socketPath);
            }
        }
        process.WaitForExit();
        int code = process.ExitCode;
        process.Dispose();
        throw new InvalidOperationException(
            $"The peer server '{program} {flag} {transport}' exited (code {code}) before it was ready; " +
            "does the program's Main hand --serve-grpc/--serve-jsonrpc to PeerServers.Run?");
    }

    public void Dispose()
    {
        try
        {
            _process.StandardInput.Close();
            if (!_process.WaitForExit(TimeSpan.FromSeconds(10)))
            {
                _process.Kill(entireProcessTree: true);
            }
        }
        catch (InvalidOperationException)
        {
        }
        _process.Dispose();
        if (_socketPath is not null)
        {
            File.Delete(_socketPath);
        }
    }
}
