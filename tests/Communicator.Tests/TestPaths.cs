using System.Reflection;

namespace XCall.Communicator.Tests;

/// <summary>The programs the end-to-end tests start, as built next to the tests (paths set by the project).</summary>
internal static class TestPaths
{
    /// <summary>tests/Communicator.TestApp's dll.</summary>
    public static string TestApp { get; } = Metadata("TestAppPath");

    /// <summary>tools/xcall's dll.</summary>
    public static string XCall { get; } = Metadata("XCallPath");

    /// <summary>The repository's scripts folder.</summary>
    public static string Scripts { get; } = Metadata("ScriptsPath");

    /// <summary>The full path of <paramref name="program"/> on PATH, or null.</summary>
    public static string? FindOnPath(string program) =>
        (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries)
            .Select(dir => Path.Combine(dir, program)).FirstOrDefault(File.Exists);

    private static string Metadata(string key) => Path.GetFullPath(typeof(TestPaths).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == key).Value!);
}
