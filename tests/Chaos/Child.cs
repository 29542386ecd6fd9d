using System.Collections.Concurrent;
using System.Diagnostics;
using System.Runtime.InteropServices;

namespace XCall.Chaos;

/// <summary>A process of this program started by the orchestrator, its output lines read as they come.</summary>
public sealed partial class Child : IDisposable
{
    private readonly Process _process;
    private readonly BlockingCollection<string> _lines = new();

    public Child(params string[] arguments)
    {
        var info = new ProcessStartInfo("dotnet") { RedirectStandardInput = true, RedirectStandardOutput = true, UseShellExecute = false };
        info.ArgumentList.Add(typeof(Child).Assembly.Location);
        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }
        _process = Process.Start(info)!;
        var reader = new Thread(() =>
        {
            while (_process.StandardOutput.ReadLine() is { } line)
            {
                _lines.Add(line);
            }
            _lines.CompleteAdding();
        }) { IsBackground = true };
        reader.Start();
    }

    public int Id => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>The next line starting with <paramref name="prefix"/>, the lines before it given to <paramref name="skipped"/>;
    /// null when the process ended or <paramref name="timeout"/> passed first.</summary>
    public string? WaitLine(string prefix, TimeSpan timeout, Action<string>? skipped = null)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            TimeSpan left = timeout - clock.Elapsed;
            if (left <= TimeSpan.Zero || !_lines.TryTake(out string? line, left))
            {
                return null;
            }
            if (line.StartsWith(prefix, StringComparison.Ordinal))
            {
                return line;
            }
            skipped?.Invoke(line);
        }
    }

    /// <summary>Every line until the process ends (or <paramref name="timeout"/> passes: then false).</summary>
    public bool Drain(TimeSpan timeout, Action<string> line)
    {
        var clock = Stopwatch.StartNew();
        while (!_lines.IsCompleted)
        {
            TimeSpan left = timeout - clock.Elapsed;
            if (left <= TimeSpan.Zero)
            {
                return false;
            }
            if (_lines.TryTake(out string? next, left))
            {
                line(next);
            }
        }
        return true;
    }

    public void Kill() => Signal(9);

    public void Stop() => Signal(19);

    public void Continue() => Signal(18);

    public void Terminate() => Signal(15);

    public bool WaitForExit(TimeSpan timeout) => _process.WaitForExit(timeout);

    private void Signal(int signal)
    {
        if (SysKill(_process.Id, signal) != 0 && !_process.HasExited)
        {
            throw new InvalidOperationException($"kill({_process.Id}, {signal}) failed: errno {System.Runtime.InteropServices.Marshal.GetLastPInvokeError()}");
        }
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit();
        }
        _process.Dispose();
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int SysKill(int pid, int signal);
}
