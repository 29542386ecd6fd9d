using System.Diagnostics;
using System.Reflection;
using System.Text;

namespace XCall.Packaging.Tests;

/// <summary>Child processes of these tests: dotnet builds and the programs they make, with their output captured.</summary>
internal static class ChildProcess
{
    /// <summary>Long enough for a restore and a build on a loaded 2-core machine.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromMinutes(10);

    /// <summary>The repository's root (the test project's build metadata).</summary>
    public static string RepositoryRoot => Metadata("RepositoryRoot");

    /// <summary>Runs <paramref name="file"/> to its end; fails the test when it exits with an error.</summary>
    public static string Run(ITestOutputHelper output, string file, string[] args, string directory)
    {
        (int exitCode, string text, string errors) = RunToEnd(file, args, directory);
        if (exitCode != 0)
        {
            output.WriteLine(text);
            Assert.Fail($"{file} {string.Join(' ', args)} exited with {exitCode}:\n{LastLines(text + errors, 40)}");
        }
        return text;
    }

    /// <summary>Runs <paramref name="file"/> to its end; returns its exit code, standard output and standard error.</summary>
    public static (int ExitCode, string Output, string Errors) RunToEnd(string file, string[] args, string directory)
    {
        using Process process = Start(file, args, directory);
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(Timeout))
        {
            process.Kill(entireProcessTree: true);
            Assert.Fail($"{file} {string.Join(' ', args)} did not finish in {Timeout}");
        }
        return (process.ExitCode, stdout.Result, stderr.Result);
    }

    /// <summary>Starts <paramref name="file"/> with its standard streams redirected.</summary>
    public static Process Start(string file, string[] args, string directory)
    {
        var info = new ProcessStartInfo(file)
        {
            WorkingDirectory = directory,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            StandardOutputEncoding = Encoding.UTF8,
        };
        foreach (string arg in args)
        {
            info.ArgumentList.Add(arg);
        }
        // Not the test host's MSBuild: the child dotnet finds its own SDK.
        info.Environment.Remove("MSBuildExtensionsPath");
        info.Environment.Remove("MSBuildSDKsPath");
        info.Environment.Remove("MSBUILD_EXE_PATH");
        info.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        info.Environment["DOTNET_NOLOGO"] = "1";
        return Process.Start(info)!;
    }

    /// <summary>
    /// Writes a console project, outside the repository so none of its Directory.Build.* applies, with warnings as
    /// errors and <paramref name="items"/> (references) in its item group.
    /// </summary>
    public static void WriteConsoleProject(string path, string items) => File.WriteAllText(path, $"""
        <Project Sdk="Microsoft.NET.Sdk">
          <PropertyGroup>
            <OutputType>Exe</OutputType>
            <TargetFramework>net10.0</TargetFramework>
            <ImplicitUsings>enable</ImplicitUsings>
            <Nullable>enable</Nullable>
            <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
          </PropertyGroup>
          <ItemGroup>
            {items}
          </ItemGroup>
        </Project>
        """);

    public static string LastLines(string text, int count) => string.Join('\n', text.Split('\n').TakeLast(count));

    public static string Metadata(string key) => typeof(ChildProcess).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == key).Value!;
}
