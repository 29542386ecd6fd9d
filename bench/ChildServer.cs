using System.Diagnostics;

namespace XCall.Bench;

/// <summary>
/// This benchmark program started again as a server process: it prints <c>READY &lt;address&gt;</c> when
/// it listens and exits when its standard input closes. Shared by the XCall and the peer servers.
/// </summary>
internal sealed class ChildServer : IDisposable
{
    private ChildServer(Process process, string address)
    {
        Process = process;
        Address = address;
    }

    /// <summary>The server process (its CPU time is read by the idle measurement).</summary>
    public Process Process { get; }

    /// <summary>What the server printed after READY.</summary>
    public string Address { get; }

    /// <summary>Starts <c>dotnet XCall.Bench.dll ARGS</c> and waits for its READY line.</summary>
    public static ChildServer Start(IEnumerable<string> args, string what)
    {
        var info = new ProcessStartInfo("dotnet") { RedirectStandardInput = true, RedirectStandardOutput = true, UseShellExecute = false };
        info.ArgumentList.Add(typeof(ChildServer).Assembly.Location);
        foreach (string arg in args)
        {
            info.ArgumentList.Add(arg);
        }
        Process process = Process.Start(info)!;
        string? line;
        while ((line = process.StandardOutput.ReadLine()) is not null)
        {
            if (line.StartsWith("READY ", StringComparison.Ordinal))
            {
                return new ChildServer(process, line["READY ".Length..].Trim());
            }
        }
        process.WaitForExit();
        int code = process.ExitCode;
        process.Dispose();
        throw new InvalidOperationException($"{what} exited (code {code}) before it was ready.");
    }

    /// <summary>Sends <paramref name="command"/> on the server's standard input and returns the rest of its
    /// first answer line that starts with <paramref name="prefix"/>.</summary>
    public string Ask(string command, string prefix)
    {
        Process.StandardInput.WriteLine(command);
        Process.StandardInput.Flush();
        return ReadAnswer(prefix, command);
    }

    /// <summary>Returns the rest of the server's next output line that starts with <paramref name="prefix"/>.</summary>
    public string ReadAnswer(string prefix, string? command = null)
    {
        while (Process.StandardOutput.ReadLine() is string line)
        {
            if (line.StartsWith(prefix, StringComparison.Ordinal))
            {
                return line[prefix.Length..].Trim();
            }
        }
        throw new InvalidOperationException($"The server exited before it answered '{command ?? prefix}'.");
    }

    /// <summary>Closes the server's standard input, so it exits; kills it if it has not after 10 s.</summary>
    public void Dispose()
    {
        try
        {
            Process.StandardInput.Close();
            if (!Process.WaitForExit(TimeSpan.FromSeconds(10)))
            {
                Process.Kill(entireProcessTree: true);
            }
        }
        catch (InvalidOperationException)
        {
            // Already gone.
        }
        Process.Dispose();
    }
}
