using System.Diagnostics;
using Microsoft.Diagnostics.NETCore.Client;

namespace XCall.Profile.Processes;

/// <summary>Finds the .NET processes this user can attach to, and checks a pid before attaching.</summary>
internal static class ProcessCatalog
{
    /// <summary>The file whose presence in a process means it uses XCall.</summary>
    public const string XCallAssemblyFile = "XCall.FastProxy.dll";

    /// <summary>The attachable .NET processes other than this one, by pid.</summary>
    public static IReadOnlyList<DotnetProcess> List()
    {
        var found = new List<DotnetProcess>();
        foreach (int pid in DiagnosticsClient.GetPublishedProcesses().Distinct().Order())
        {
            if (pid == Environment.ProcessId)
            {
                continue;
            }
            string? name = NameOf(pid);
            if (name is null)
            {
                continue; // Exited since it was listed (or a stale endpoint).
            }
            found.Add(new DotnetProcess(pid, name, CommandLineOf(pid) ?? name, LoadsXCall(pid)));
        }
        return found;
    }

    /// <summary>Checks that <paramref name="pid"/> is a running process with a .NET diagnostic endpoint.</summary>
    /// <exception cref="ProfileException">It is not.</exception>
    public static void EnsureAttachable(int pid)
    {
        if (NameOf(pid) is null)
        {
            throw new ProfileException(ExitCodes.NoSuchProcess, $"no process with pid {pid}");
        }
        if (!IsPublished(pid))
        {
            throw new ProfileException(ExitCodes.NotDotNet, $"process {pid} is not a .NET process (no diagnostic endpoint)");
        }
    }

    /// <summary>True when <paramref name="pid"/> is still running.</summary>
    public static bool IsRunning(int pid) => NameOf(pid) is not null;

    private static bool IsPublished(int pid) => DiagnosticsClient.GetPublishedProcesses().Contains(pid);

    private static string? NameOf(int pid)
    {
        try
        {
            using var process = Process.GetProcessById(pid);
            return process.HasExited ? null : process.ProcessName;
        }
        catch (ArgumentException)
        {
            return null;
        }
        catch (InvalidOperationException)
        {
            return null;
        }
    }

    private static string? CommandLineOf(int pid)
    {
        string? text = ReadProcFile(pid, "cmdline");
        return string.IsNullOrEmpty(text) ? null : text.TrimEnd('\0').Replace('\0', ' ');
    }

    private static bool? LoadsXCall(int pid)
    {
        // The runtime maps every assembly it loads from a file, so the file appears in the process's
        // memory map (a single-file bundle would not show it; that reads as false).
        string? maps = ReadProcFile(pid, "maps");
        return maps?.Contains("/" + XCallAssemblyFile, StringComparison.Ordinal);
    }

    private static string? ReadProcFile(int pid, string name)
    {
        if (!OperatingSystem.IsLinux())
        {
            return null;
        }
        try
        {
            return File.ReadAllText($"/proc/{pid}/{name}");
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
