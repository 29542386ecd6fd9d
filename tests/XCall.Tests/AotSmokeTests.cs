using System.Diagnostics;
using System.Reflection;
using System.Runtime.InteropServices;

namespace XCall.Tests;

/// <summary>
/// The library and generated code under Native AOT: publishes tests/AotSmoke with PublishAot (no trim or AOT
/// warning may appear) and runs the native binary, which serves and calls the test contracts over shm:// and
/// tcp:// in one process (data graphs, polymorphism, an exception, an async call, a callback).
/// </summary>
public sealed class AotSmokeTests
{
    [SkippableFact]
    public void Native_AOT_publish_is_warning_free_and_the_binary_calls_over_shm_and_tcp()
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "The AOT smoke test publishes for Linux only.");
        Skip.If(!OnPath("clang") && !OnPath("gcc"), "Native AOT links with clang or gcc, and neither is on PATH.");
        string project = typeof(AotSmokeTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "AotSmokeProject").Value!;
        string output = Path.Combine(Path.GetTempPath(), "xcall-aot-" + Guid.NewGuid().ToString("N"));
        try
        {
            // The libraries are already built by the test run: publish only links them (no rebuild of files other tests have loaded).
            (int publishCode, string publishText) = Run("dotnet",
                ["publish", project, "-c", "Release", "-r", RuntimeInformation.RuntimeIdentifier, "-o", output, "-nologo", "-p:BuildProjectReferences=false"],
                TimeSpan.FromMinutes(10));
            Assert.True(publishCode == 0, "dotnet publish failed:\n" + publishText);
            string[] warnings = [.. publishText.Split('\n').Where(line => line.Contains(": warning ", StringComparison.Ordinal))];
            Assert.True(warnings.Length == 0, "the AOT publish warned:\n" + string.Join('\n', warnings));

            (int code, string text) = Run(Path.Combine(output, "XCall.AotSmoke"), [], TimeSpan.FromMinutes(2));
            Assert.True(code == 0, "the native binary failed:\n" + text);
            Assert.Contains("AOT OK 16 checks (dynamic code supported: False)", text);
        }
        finally
        {
            if (Directory.Exists(output))
            {
                Directory.Delete(output, recursive: true);
            }
        }
    }

    private static bool OnPath(string tool) =>
        (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries)
            .Any(dir => File.Exists(Path.Combine(dir, tool)));

    private static (int ExitCode, string Output) Run(string file, string[] args, TimeSpan timeout)
    {
        var info = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string arg in args)
        {
            info.ArgumentList.Add(arg);
        }
        using Process process = Process.Start(info)!;
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(timeout))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{file} {string.Join(' ', args)} did not finish within {timeout}.");
        }
        return (process.ExitCode, stdout.Result + stderr.Result);
    }
}
