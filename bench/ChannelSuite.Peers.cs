using System.ComponentModel;
using System.Diagnostics;

namespace XCall.Bench;

internal static partial class ChannelSuite
{
    /// <summary>Builds a Go peer carried in bench/Peers; null, with the reason printed, when `go` is missing or the build fails.</summary>
    private static string? BuildGo(string work, string file, SuiteLog log)
    {
        string binary = Path.Combine(work, Path.GetFileNameWithoutExtension(file) + "-go");
        string source = Path.Combine(AppContext.BaseDirectory, "Peers", file);
        if (CaptureAll("go", ["build", "-o", binary, source]) is null || !File.Exists(binary))
        {
            log.Line($"// go ({file}): skipped (no `go` on PATH, or the build failed)");
            return null;
        }
        return binary;
    }

    /// <summary>Runs a program; returns its first RESULT line, null when it cannot start or fails.</summary>
    private static string? Capture(string program, string[] args) => CaptureAll(program, args)?.FirstOrDefault();

    /// <summary>Runs a program; returns its RESULT lines (none for a program that prints none), null when it cannot start or fails.</summary>
    private static string[]? CaptureAll(string program, string[] args)
    {
        try
        {
            using Process p = Process.Start(new ProcessStartInfo(program, args) { RedirectStandardOutput = true, RedirectStandardError = true })!;
            Task<string> error = p.StandardError.ReadToEndAsync();
            string output = p.StandardOutput.ReadToEnd();
            p.WaitForExit();
            if (p.ExitCode != 0)
            {
                Console.Error.WriteLine($"// {program} exited with {p.ExitCode}: {error.Result.Trim()}");
                return null;
            }
            return [.. output.Split('\n').Where(l => l.StartsWith("RESULT ", StringComparison.Ordinal)).Select(l => l.Trim())];
        }
        catch (Win32Exception)
        {
            return null;
        }
    }
}
