using System.Diagnostics;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Threading.Channels;

namespace XCall.Transport.Tcp.Tests.Support;

/// <summary>
/// tests/Transport.Tcp.TestHost run as a child process (<c>dotnet &lt;dll&gt; ...</c>), optionally inside a
/// network namespace. Its stdout lines are awaited ("READY 12345", "OK ..."), never slept for.
/// </summary>
internal sealed partial class TestHostProcess : IDisposable
{
    private readonly Process _process;
    private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();
    private readonly List<string> _all = [];

    private TestHostProcess(Process process)
    {
        _process = process;
        process.OutputDataReceived += (_, e) => OnLine(e.Data, endOfStdout: e.Data is null);
        process.ErrorDataReceived += (_, e) => OnLine(e.Data is null ? null : "stderr: " + e.Data, endOfStdout: false);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    public static string DllPath { get; } = typeof(TestHostProcess).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "TestHostPath").Value!;

    public int Pid => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>Everything the process printed so far (for failure messages).</summary>
    public string Output
    {
        get
        {
            lock (_all)
            {
                return string.Join('\n', _all);
            }
        }
    }

    /// <summary>Starts <c>dotnet TestHost.dll args</c>, inside network namespace <paramref name="netns"/> when given.</summary>
    public static TestHostProcess Start(string args, string? netns = null)
    {
        Assert.True(File.Exists(DllPath), $"TestHost not built at {DllPath}");
        string dotnet = Environment.ProcessPath is { } p && Path.GetFileNameWithoutExtension(p) == "dotnet" ? p : "dotnet";
        var info = new ProcessStartInfo
        {
            FileName = netns is null ? dotnet : "ip",
            Arguments = netns is null ? $"\"{DllPath}\" {args}" : $"netns exec {netns} \"{dotnet}\" \"{DllPath}\" {args}",
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        info.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        return new TestHostProcess(Process.Start(info)!);
    }

    /// <summary>Waits for the first line starting with <paramref name="prefix"/> and returns it.</summary>
    public async Task<string> WaitForLineAsync(string prefix)
    {
        using var timeout = new CancellationTokenSource(Timeouts.Long);
        try
        {
            while (true)
            {
                string line = await _lines.Reader.ReadAsync(timeout.Token);
                if (line.StartsWith(prefix, StringComparison.Ordinal))
                {
                    return line;
                }
                if (line.StartsWith("FAIL", StringComparison.Ordinal))
                {
                    Assert.Fail($"TestHost failed: {line}\n{Output}");
                }
            }
        }
        catch (ChannelClosedException)
        {
            Assert.Fail($"TestHost exited (code {(_process.HasExited ? _process.ExitCode : -1)}) before printing '{prefix}'.\n{Output}");
            throw;
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"TestHost printed no '{prefix}' line within {Timeouts.Long}.\n{Output}");
            throw;
        }
    }

    /// <summary>The port a server reported in its "READY port" line.</summary>
    public async Task<int> WaitForReadyAsync() => int.Parse((await WaitForLineAsync("READY ")).AsSpan(6));

    public async Task<int> WaitForExitAsync()
    {
        await _process.WaitForExitAsync().WaitAsync(Timeouts.Long);
        return _process.ExitCode;
    }

    /// <summary>Sends a POSIX signal (SIGSTOP, SIGCONT, SIGKILL...) to the process.</summary>
    public void Signal(int signal)
    {
        if (Kill(_process.Id, signal) != 0)
        {
            throw new InvalidOperationException($"kill({_process.Id}, {signal}) failed: errno {System.Runtime.InteropServices.Marshal.GetLastPInvokeError()}");
        }
    }

    public const int SigKill = 9;
    public const int SigCont = 18;
    public const int SigStop = 19;

    public void Dispose()
    {
        try
        {
            if (!_process.HasExited)
            {
                Kill(_process.Id, SigCont);
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit(10_000);
            }
        }
        catch (InvalidOperationException)
        {
            // Already gone.
        }
        _process.Dispose();
    }

    private void OnLine(string? line, bool endOfStdout)
    {
        if (line is null)
        {
            if (endOfStdout)
            {
                _lines.Writer.TryComplete();
            }
            return;
        }
        lock (_all)
        {
            _all.Add(line);
        }
        _lines.Writer.TryWrite(line);
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
