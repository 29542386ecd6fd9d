using XCall.Profile.Tests.Support;

namespace XCall.Profile.Tests;

/// <summary><c>xcall-profile ps</c> and <c>monitor</c> against a real XCall process.</summary>
public sealed class PsAndMonitorTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Ps_lists_the_process_and_marks_it_as_an_XCall_user()
    {
        using TestAppProcess app = await TestAppProcess.StartAsync();
        using var ps = ChildProcess.StartXCallProfile("ps");

        int exitCode = await ps.WaitForExitAsync(s_timeout);

        Assert.Equal(0, exitCode);
        string line = await ps.Output.WaitForAsync(l => l.TrimStart().StartsWith($"{app.Id} ", StringComparison.Ordinal), s_timeout, "ps line of the test app");
        string[] columns = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal("*", columns[1]);
        Assert.Contains("XCall.Profile.TestApp.dll", line);
    }

    [Fact]
    public async Task Monitor_shows_calls_as_they_happen_and_ends_when_the_process_exits()
    {
        using TestAppProcess app = await TestAppProcess.StartAsync();
        using var monitor = ChildProcess.StartXCallProfile("monitor", "--pid", $"{app.Id}");
        await monitor.Error.WaitForAsync(line => line.StartsWith("monitoring", StringComparison.Ordinal), s_timeout, "'monitoring' line from xcall-profile");
        await app.RunCallsAsync(50);

        // A totals row: contract, method, side, then the call count.
        await monitor.Output.WaitForAsync(IsRow("Add", "client", 50), s_timeout, "Add client row with 50 calls");
        await monitor.Output.WaitForAsync(IsRow("Echo", "server", 25), s_timeout, "Echo server row with 25 calls");
        app.Process.CloseInput();
        int exitCode = await monitor.WaitForExitAsync(s_timeout);

        Assert.Equal(0, exitCode);
        Assert.Contains($"process {app.Id} exited", monitor.Error.Text);
    }

    private static Func<string, bool> IsRow(string method, string side, int calls) => line =>
        line.Split(' ', StringSplitOptions.RemoveEmptyEntries) is [_, var m, var s, var c, ..] && m == method && s == side && c == $"{calls}";
}
