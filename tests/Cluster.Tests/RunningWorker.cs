using System.Diagnostics;
using System.Text;
using System.Text.RegularExpressions;

namespace XCall.Cluster.Tests;

/// <summary>An <c>xcall worker</c> process started for a test: ready once it printed that it serves its pool; disposing kills it.</summary>
internal sealed partial class RunningWorker : IAsyncDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();

    private RunningWorker(Process process, string name, string? listenAddress)
    {
        _process = process;
        Name = name;
        ListenAddress = listenAddress;
    }

    /// <summary>The name it serves under (<see cref="WorkerInfo.Name"/>).</summary>
    public string Name { get; }

    /// <summary>The TCP address it also answers at (started with <c>--listen</c>), or null.</summary>
    public string? ListenAddress { get; }

    /// <summary>Its process id.</summary>
    public int Pid => _process.Id;

    /// <summary>What it printed so far.</summary>
    public string Output
    {
        get
        {
            lock (_output)
            {
                return _output.ToString();
            }
        }
    }

    /// <summary>Whether it has exited.</summary>
    public bool HasExited => _process.HasExited;

    /// <summary>
    /// Starts <c>dotnet <paramref name="xcall"/> worker --assembly <paramref name="assembly"/> --pool <paramref name="pool"/></c>
    /// (plus <paramref name="extra"/>) and waits until it serves, at most <paramref name="ready"/>.
    /// </summary>
    public static async Task<RunningWorker> StartAsync(string xcall, string assembly, string pool, TimeSpan ready, params string[] extra)
    {
        var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string argument in (string[])[xcall, "worker", "--assembly", assembly, "--pool", pool, .. extra])
        {
            start.ArgumentList.Add(argument);
        }
        var process = new Process { StartInfo = start };
        var serving = new TaskCompletionSource<Match>(TaskCreationOptions.RunContinuationsAsynchronously);
        var output = new StringBuilder();
        DataReceivedEventHandler append = (_, e) =>
        {
            if (e.Data is null)
            {
                return;
            }
            lock (output)
            {
                output.AppendLine(e.Data);
            }
            if (ServesLine().Match(e.Data) is { Success: true } match)
            {
                serving.TrySetResult(match);
            }
        };
        process.OutputDataReceived += append;
        process.ErrorDataReceived += append;
        process.Exited += (_, _) => serving.TrySetException(new InvalidOperationException($"xcall worker exited before it served:\n{output}"));
        process.EnableRaisingEvents = true;
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        Match serves;
        try
        {
            serves = await serving.Task.WaitAsync(ready);
        }
        catch
        {
            process.Kill(entireProcessTree: true);
            process.Dispose();
            throw;
        }
        var worker = new RunningWorker(process, serves.Groups[1].Value, serves.Groups[2].Success ? serves.Groups[2].Value : null);
        lock (output)
        {
            worker._output.Append(output);
        }
        process.OutputDataReceived += (_, e) => worker.Append(e.Data);
        process.ErrorDataReceived += (_, e) => worker.Append(e.Data);
        return worker;
    }

    /// <summary>Waits until it has exited (it was killed), at most <paramref name="timeout"/>.</summary>
    public Task WaitForExitAsync(TimeSpan timeout) => _process.WaitForExitAsync().WaitAsync(timeout);

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
        }
        await _process.WaitForExitAsync();
        _process.Dispose();
    }

    private void Append(string? line)
    {
        if (line is not null)
        {
            lock (_output)
            {
                _output.AppendLine(line);
            }
        }
    }

    [GeneratedRegex(@"^xcall worker: (\S+) serves pool .*?(?:, and at (tcp://\S+))? \(pid \d+\)$")]
    private static partial Regex ServesLine();
}
