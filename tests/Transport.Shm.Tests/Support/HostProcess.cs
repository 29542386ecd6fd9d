using System.Diagnostics;
using System.Reflection;
using System.Threading.Channels;

namespace XCall.Transport.Shm.Tests.Support;

/// <summary>A child process running XCall.Transport.Shm.TestHost, with its output lines to wait on.</summary>
internal sealed class HostProcess : IDisposable
{
    private static readonly TimeSpan s_lineTimeout = TimeSpan.FromSeconds(60);

    private readonly Process _process;
    private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();
    private readonly ITestOutputHelper _output;
    private readonly string _label;

    private HostProcess(Process process, ITestOutputHelper output, string label)
    {
        _process = process;
        _output = output;
        _label = label;
    }

    /// <summary>Path of the test host, recorded at build time by the test project.</summary>
    public static string Dll { get; } = typeof(HostProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "TestHostDll").Value!;

    public int Pid => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>Starts <c>dotnet TestHost.dll arguments</c>, optionally through a wrapper command (e.g. setpriv).</summary>
    public static HostProcess Start(ITestOutputHelper output, string label, IEnumerable<string> arguments, IEnumerable<string>? wrapper = null)
    {
        var info = new ProcessStartInfo
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        var command = new List<string>(wrapper ?? []) { "dotnet", Dll };
        command.AddRange(arguments);
        info.FileName = command[0];
        foreach (string argument in command.Skip(1))
        {
            info.ArgumentList.Add(argument);
        }
        info.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        var process = new Process { StartInfo = info };
        var host = new HostProcess(process, output, label);
        process.OutputDataReceived += (_, e) => host.OnLine(e.Data, stderr: false);
        process.ErrorDataReceived += (_, e) => host.OnLine(e.Data, stderr: true);
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        host.Log($"started pid {process.Id}: {string.Join(' ', command)}");
        return host;
    }

    /// <summary>Waits for a line starting with <paramref name="prefix"/>; fails if the process ends first.</summary>
    public async Task<string> WaitForLineAsync(string prefix)
    {
        using var timeout = new CancellationTokenSource(s_lineTimeout);
        try
        {
            await foreach (string line in _lines.Reader.ReadAllAsync(timeout.Token))
            {
                if (line.StartsWith(prefix, StringComparison.Ordinal))
                {
                    return line;
                }
            }
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"{_label} printed no line starting with '{prefix}' within {s_lineTimeout.TotalSeconds} s.");
        }
        throw new InvalidOperationException($"{_label} exited (code {ExitCodeOrNull()}) before printing a line starting with '{prefix}'.");
    }

    /// <summary>SIGKILL.</summary>
    public void Kill()
    {
        Log("kill -9");
        _process.Kill();
    }

    public async Task<int> WaitForExitAsync()
    {
        using var timeout = new CancellationTokenSource(s_lineTimeout);
        await _process.WaitForExitAsync(timeout.Token);
        return _process.ExitCode;
    }

    public void CloseInput() => _process.StandardInput.Close();

    public void Dispose()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill();
                _process.WaitForExit();
            }
        }
        catch (InvalidOperationException)
        {
        }
        _process.Dispose();
    }

    private void OnLine(string? line, bool stderr)
    {
        if (line is null)
        {
            if (!stderr)
            {
                _lines.Writer.TryComplete();
            }
            return;
        }
        Log((stderr ? "stderr: " : "") + line);
        if (!stderr)
        {
            _lines.Writer.TryWrite(line);
        }
    }

    private void Log(string text)
    {
        try
        {
            _output.WriteLine($"[{_label}] {text}");
        }
        catch (InvalidOperationException)
        {
            // The test already finished.
        }
    }

    private int? ExitCodeOrNull()
    {
        try
        {
            return _process.HasExited ? _process.ExitCode : null;
        }
        catch (InvalidOperationException)
        {
            return null;
        }
    }
}
