namespace XCall.Profile.Tests.Support;

/// <summary>A running XCall.Profile.TestApp: connected and idle until told <c>GO n</c>.</summary>
internal sealed class TestAppProcess : IDisposable
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);

    private TestAppProcess(ChildProcess process) => Process = process;

    /// <summary>The child process.</summary>
    public ChildProcess Process { get; }

    /// <summary>Its pid.</summary>
    public int Id => Process.Id;

    /// <summary>Starts the app and waits until it printed READY.</summary>
    public static async Task<TestAppProcess> StartAsync()
    {
        var app = new TestAppProcess(ChildProcess.StartDotnet(TestPaths.TestApp));
        try
        {
            await app.Process.Output.WaitForAsync(line => line == $"READY {app.Id}", s_timeout, "READY line from the test app");
            return app;
        }
        catch
        {
            app.Dispose();
            throw;
        }
    }

    /// <summary>Makes it call Add <paramref name="count"/> times and Echo <paramref name="count"/> / 2 times; waits for DONE.</summary>
    public async Task RunCallsAsync(int count)
    {
        Process.WriteLine($"GO {count}");
        await Process.Output.WaitForAsync(line => line == "DONE", s_timeout, "DONE line from the test app");
    }

    /// <summary>Kills it if it still runs.</summary>
    public void Dispose() => Process.Dispose();
}
