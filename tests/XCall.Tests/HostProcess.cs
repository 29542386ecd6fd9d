using System.Diagnostics;
using System.Reflection;

namespace XCall.Tests;

/// <summary>A real server process (XCall.TestHost) serving the test contracts at an address.</summary>
public sealed class HostProcess : IDisposable
{
    private readonly Process _process;

    private HostProcess(Process process, string address)
    {
        _process = process;
        Address = address;
    }

    /// <summary>The address the host serves (with its real TCP port).</summary>
    public string Address { get; }

    /// <summary>The host's process id.</summary>
    public int ProcessId => _process.Id;

    public static string UniqueName(string prefix) => $"{prefix}-{Environment.ProcessId}-{Guid.NewGuid().ToString("N")[..8]}";

    /// <summary>Starts the host and waits until it prints READY.</summary>
    public static HostProcess Start(string address, params string[] extra)
    {
        string path = typeof(HostProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "TestHostPath").Value!;
        var info = new ProcessStartInfo("dotnet") { RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        info.ArgumentList.Add(path);
        info.ArgumentList.Add("serve");
        info.ArgumentList.Add(address);
        foreach (string e in extra)
        {
            info.ArgumentList.Add(e);
        }
        Process process = Process.Start(info)!;
        string? line;
        while ((line = process.StandardOutput.ReadLine()) is not null)
        {
            if (line.StartsWith("READY ", StringComparison.Ordinal))
            {
                return new HostProcess(process, line["READY ".Length..].Trim());
            }
        }
        string error = process.StandardError.ReadToEnd();
        process.WaitForExit();
        throw new InvalidOperationException($"XCall.TestHost exited with {process.ExitCode} before READY: {error}");
    }

    /// <summary>SIGKILL: the host dies without closing anything.</summary>
    public void Kill()
    {
        _process.Kill(entireProcessTree: true);
        _process.WaitForExit();
    }

    public bool HasExited => _process.HasExited;

    /// <summary>Sends the host a signal by name (<c>STOP</c>: alive, its sockets open, but it runs no more; <c>CONT</c>).</summary>
    public void Signal(string signal)
    {
        using var kill = System.Diagnostics.Process.Start("kill", [$"-{signal}", ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture)])!;
        kill.WaitForExit();
        Assert.Equal(0, kill.ExitCode);
    }

    public void Dispose()
    {
        if (!_process.HasExited)
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
                // Already gone.
            }
        }
        _process.Dispose();
    }
}
