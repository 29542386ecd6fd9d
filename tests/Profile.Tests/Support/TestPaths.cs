using System.Reflection;

namespace XCall.Profile.Tests.Support;

/// <summary>Where the built programs the end-to-end tests start are (recorded by the project file).</summary>
internal static class TestPaths
{
    /// <summary>XCall.Profile.TestApp.dll.</summary>
    public static string TestApp { get; } = Metadata("TestAppPath");

    /// <summary>xcall-profile.dll.</summary>
    public static string XCallProfile { get; } = Metadata("XCallProfilePath");

    /// <summary>The dotnet host that runs this test (the CLI sets DOTNET_HOST_PATH), else the one on PATH.</summary>
    public static string DotnetHost { get; } = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host ? host : "dotnet";

    private static string Metadata(string key)
    {
        string path = typeof(TestPaths).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == key).Value!;
        path = Path.GetFullPath(path);
        return File.Exists(path) ? path : throw new FileNotFoundException($"{key}: {path} was not built", path);
    }
}
