using System.Reflection;

namespace XCall.Channels.Distributed.Tests;

/// <summary>The programs the end-to-end tests start, as built next to the tests (paths set by the project).</summary>
internal static class TestPaths
{
    /// <summary>tests/Channels.Distributed.TestApp's dll.</summary>
    public static string TestApp { get; } = Metadata("TestAppPath");

    /// <summary>tools/xcall's dll.</summary>
    public static string XCall { get; } = Metadata("XCallPath");

    /// <summary>samples/NetAltReader's dll.</summary>
    public static string NetAltReader { get; } = Metadata("NetAltReaderPath");

    /// <summary>samples/DistributedPi's dll.</summary>
    public static string DistributedPi { get; } = Metadata("DistributedPiPath");

    /// <summary>samples/WorkerPool's dll.</summary>
    public static string WorkerPool { get; } = Metadata("WorkerPoolPath");

    private static string Metadata(string key) => Path.GetFullPath(typeof(TestPaths).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == key).Value!);
}
