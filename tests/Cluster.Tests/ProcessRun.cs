using System.Diagnostics;
using System.Text;

namespace XCall.Cluster.Tests;

/// <summary>A child process run to its end: its exit code and its output, both streams in the order they came.</summary>
internal sealed record ProcessRun(int ExitCode, string Output)
{
    /// <summary>
    /// Runs <paramref name="size"/> processes of <paramref name="program"/> as the ranks of one world, each told its
    /// rank, the size and a new job id through XCall's variables (no launcher, so nothing ends them but themselves).
    /// </summary>
    public static Task<ProcessRun[]> RunWorldAsync(string program, IEnumerable<string> arguments, int size, TimeSpan hang) =>
        Task.WhenAll(StartWorld(program, arguments, size, hang));

    /// <summary>Starts the ranks as <see cref="RunWorldAsync"/> does; <paramref name="end"/> of a rank kills that rank.</summary>
    public static Task<ProcessRun>[] StartWorld(string program, IEnumerable<string> arguments, int size, TimeSpan hang, Func<int, CancellationToken>? end = null)
    {
        string job = $"w{Environment.ProcessId}-{Guid.NewGuid():N}"[..20];
        return [.. Enumerable.Range(0, size).Select(rank => RunAsync(program, arguments, hang, new Dictionary<string, string>
        {
            ["XCALL_RANK"] = rank.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["XCALL_SIZE"] = size.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["XCALL_JOB_ID"] = job,
        }, end?.Invoke(rank) ?? default))];
    }

    /// <summary>
    /// Runs <paramref name="program"/> with <paramref name="arguments"/>; kills it (and fails) if it outlives
    /// <paramref name="hang"/>, kills it (and returns what it wrote) when <paramref name="end"/> is cancelled.
    /// </summary>
    public static async Task<ProcessRun> RunAsync(string program, IEnumerable<string> arguments, TimeSpan hang,
        IReadOnlyDictionary<string, string>? environment = null, CancellationToken end = default)
    {
        var start = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        foreach ((string name, string value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[name] = value;
        }
        var output = new StringBuilder();
        using var process = new Process { StartInfo = start };
        DataReceivedEventHandler append = (_, e) =>
        {
            if (e.Data is not null)
            {
                lock (output)
                {
                    output.AppendLine(e.Data);
                }
            }
        };
        process.OutputDataReceived += append;
        process.ErrorDataReceived += append;
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        using var timeout = new CancellationTokenSource(hang);
        using var either = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token, end);
        try
        {
            await process.WaitForExitAsync(either.Token);
        }
        catch (OperationCanceledException) when (end.IsCancellationRequested)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{program} {string.Join(' ', arguments)} did not end within {hang}; output so far:\n{output}");
        }
        lock (output)
        {
            return new ProcessRun(process.ExitCode, output.ToString());
        }
    }
}
