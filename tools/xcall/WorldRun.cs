using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using XCall.Cluster;

namespace XCall.Cli;

/// <summary>
/// One <c>xcall run</c>: starts the ranks, forwards their output line by line with a <c>[rank] </c> prefix, and
/// ends them all when one exits with a non-zero code (its code becomes the run's).
/// </summary>
internal sealed class WorldRun
{
    // Design: output lines of every rank are written under _writeLock, so a line never interleaves with another.
    // _firstFailure is set once under _writeLock; the ranks are ended outside it.
    private readonly RunSettings _settings;
    private readonly TextWriter _out;
    private readonly TextWriter _error;
    private readonly object _writeLock = new();

    public WorldRun(RunSettings settings, TextWriter output, TextWriter error)
    {
        _settings = settings;
        _out = output;
        _error = error;
    }

    /// <summary>Runs the world; returns the first non-zero exit code of a rank, or 0.</summary>
    public async Task<int> RunAsync(CancellationToken cancellationToken)
    {
        string store = _settings.Store ?? $"tcp://127.0.0.1:{FreeLoopbackPort()}/{WorldEnvironment.StoreName(_settings.JobId)}";
        var ranks = new List<Process>();
        try
        {
            for (int rank = 0; rank < _settings.Ranks; rank++)
            {
                ranks.Add(Start(rank, store));
            }
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException)
        {
            Write(_error, $"xcall run: cannot start '{_settings.Program}': {e.Message}");
            EndAll(ranks);
            return 127;
        }

        var exits = ranks.Select(p => p.WaitForExitAsync(CancellationToken.None)).ToList();
        var pending = new List<Task>(exits);
        Task cancelled = Task.Delay(Timeout.Infinite, cancellationToken);
        int code = 0;
        while (pending.Count > 0)
        {
            Task done = await Task.WhenAny([.. pending, cancelled]).ConfigureAwait(false);
            if (done == cancelled)
            {
                Write(_error, "xcall run: interrupted; ending every rank.");
                EndAll(ranks);
                await Task.WhenAll(pending).ConfigureAwait(false);
                return 130;
            }
            pending.Remove(done);
            int rank = exits.IndexOf(done);
            int exitCode = ranks[rank].ExitCode;
            if (exitCode != 0 && code == 0)
            {
                code = exitCode;
                Write(_error, $"xcall run: rank {rank} exited with code {exitCode}; ending the other ranks.");
                EndAll(ranks);
            }
        }
        foreach (Process process in ranks)
        {
            process.Dispose();
        }
        return code;
    }

    private Process Start(int rank, string store)
    {
        var start = new ProcessStartInfo(_settings.Program)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in _settings.Arguments)
        {
            start.ArgumentList.Add(argument);
        }
        start.Environment[WorldEnvironment.RankVariable] = rank.ToString(System.Globalization.CultureInfo.InvariantCulture);
        start.Environment[WorldEnvironment.SizeVariable] = _settings.Ranks.ToString(System.Globalization.CultureInfo.InvariantCulture);
        start.Environment[WorldEnvironment.JobIdVariable] = _settings.JobId;
        start.Environment[WorldEnvironment.StoreVariable] = store;
        var process = new Process { StartInfo = start };
        string prefix = $"[{rank}] ";
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                Write(_out, prefix + e.Data);
            }
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                Write(_error, prefix + e.Data);
            }
        };
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    private void Write(TextWriter writer, string line)
    {
        lock (_writeLock)
        {
            writer.WriteLine(line);
            writer.Flush();
        }
    }

    private static void EndAll(List<Process> ranks)
    {
        foreach (Process process in ranks)
        {
            try
            {
                if (!process.HasExited)
                {
                    process.Kill(entireProcessTree: true);
                }
            }
            catch (InvalidOperationException)
            {
                // It exited meanwhile.
            }
        }
    }

    /// <summary>
    /// A port free on loopback now, which rank 0 binds a moment later. On Linux, taken below the kernel's range of
    /// ephemeral ports where there is room (<see cref="EphemeralPortsFrom"/>): a port of that range may go meanwhile to
    /// any socket of any process that binds port 0 or connects, while one below it goes only to a bind that names it.
    /// </summary>
    private static int FreeLoopbackPort()
    {
        // Elsewhere than Linux the range is not read, and the port comes from the kernel's own pick, as a fallback does.
        int below = OperatingSystem.IsLinux() ? EphemeralPortsFrom(ReadPortRange()) : FixedPortsFrom;
        for (int attempt = 0; attempt < 64 && below - FixedPortsFrom > 1024; attempt++)
        {
            int port = Random.Shared.Next(FixedPortsFrom, below);
            if (TryBind(port))
            {
                return port;
            }
        }
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;

        static bool TryBind(int port)
        {
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                socket.Bind(new IPEndPoint(IPAddress.Loopback, port));
                return true;
            }
            catch (SocketException)
            {
                return false;
            }
        }

        static string? ReadPortRange()
        {
            try
            {
                return File.ReadAllText("/proc/sys/net/ipv4/ip_local_port_range");
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                return null;
            }
        }
    }

    /// <summary>The lowest port <see cref="FreeLoopbackPort"/> picks.</summary>
    internal const int FixedPortsFrom = 10000;

    /// <summary>
    /// The first port of the kernel's ephemeral range from the text of /proc/sys/net/ipv4/ip_local_port_range
    /// ("32768\t60999"); 32768 (Linux's default, and below the IANA range other systems use) when it is missing or
    /// unreadable.
    /// </summary>
    internal static int EphemeralPortsFrom(string? text)
    {
        string[] fields = (text ?? "").Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
        return fields.Length == 2 && int.TryParse(fields[0], out int low) && low is > 0 and <= 65535 ? low : 32768;
    }
}
