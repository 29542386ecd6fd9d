using System.Diagnostics;

namespace XCall.Profile.Tests.Support;

/// <summary>A program started by a test, with its output collected line by line; killed on dispose.</summary>
internal sealed class ChildProcess : IDisposable
{
    private readonly Process _process;

    private ChildProcess(Process process) => _process = process;

    /// <summary>Its stdout.</summary>
    public OutputLines Output { get; } = new();

    /// <summary>Its stderr.</summary>
    public OutputLines Error { get; } = new();

    /// <summary>Its pid.</summary>
    public int Id => _process.Id;

    /// <summary>Starts <paramref name="fileName"/> with every stream redirected.</summary>
    public static ChildProcess Start(string fileName, params string[] arguments)
    {
        var info = new ProcessStartInfo(fileName)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }
        var process = new Process { StartInfo = info };
        var child = new ChildProcess(process);
        process.OutputDataReceived += (_, e) => child.Output.Add(e.Data);
        process.ErrorDataReceived += (_, e) => child.Error.Add(e.Data);
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return child;
    }

    /// <summary>Runs a .NET program (<c>dotnet app.dll ...</c>).</summary>
    public static ChildProcess StartDotnet(string dll, params string[] arguments) =>
        Start(TestPaths.DotnetHost, [dll, .. arguments]);

    /// <summary>Runs xcall-profile with <paramref name="arguments"/>.</summary>
    public static ChildProcess StartXCallProfile(params string[] arguments) =>
        StartDotnet(TestPaths.XCallProfile, arguments);

    /// <summary>Writes a line to its stdin.</summary>
    public void WriteLine(string line)
    {
        _process.StandardInput.WriteLine(line);
        _process.StandardInput.Flush();
    }

    /// <summary>Closes its stdin.</summary>
    public void CloseInput() => _process.StandardInput.Close();

    /// <summary>Waits until it exited and its output was read to the end; returns its exit code.</summary>
    /// <exception cref="TimeoutException">It still ran after <paramref name="timeout"/>.</exception>
    public async Task<int> WaitForExitAsync(TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            await _process.WaitForExitAsync(cancel.Token);
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"process {Id} still runs after {timeout}. stdout:\n{Output.Text}\nstderr:\n{Error.Text}");
        }
        _process.WaitForExit(); // Drains the redirected streams.
        return _process.ExitCode;
    }

    /// <summary>Kills it (and its children) if it still runs.</summary>
    public void Dispose()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit();
            }
        }
        catch (InvalidOperationException)
        {
            // Exited meanwhile.
        }
        _process.Dispose();
    }
}
