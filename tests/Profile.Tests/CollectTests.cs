using System.Text.Json;
using XCall.Profile.Tests.Support;

namespace XCall.Profile.Tests;

/// <summary><c>xcall-profile collect</c> against a real XCall process.</summary>
public sealed class CollectTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Collect_reports_each_method_and_side_of_a_running_process_as_json()
    {
        using TestAppProcess app = await TestAppProcess.StartAsync();
        // The duration is only a ceiling: SIGTERM (handled as Ctrl+C is) ends the collection once every
        // call is done, so a slow machine cannot end it in the middle of the calls.
        using var collect = ChildProcess.StartXCallProfile("collect", "--pid", $"{app.Id}", "--duration", "60s", "--format", "json");
        await collect.Error.WaitForAsync(line => line.StartsWith("collecting", StringComparison.Ordinal), s_timeout, "'collecting' line from xcall-profile");
        await app.RunCallsAsync(200);
        PosixSignals.Terminate(collect.Id);

        int exitCode = await collect.WaitForExitAsync(s_timeout);

        Assert.True(exitCode == 0, $"exit code {exitCode}; stderr:\n{collect.Error.Text}");
        using JsonDocument report = JsonDocument.Parse(collect.Output.Text);
        JsonElement root = report.RootElement;
        Assert.Equal(app.Id, root.GetProperty("pid").GetInt32());
        Assert.InRange(root.GetProperty("durationSeconds").GetDouble(), 0.001, 59.9);
        Assert.Equal(600, root.GetProperty("totalCalls").GetInt64());
        var rows = root.GetProperty("methods").EnumerateArray().ToDictionary(
            row => (row.GetProperty("method").GetString(), row.GetProperty("side").GetString()));
        Assert.Equal(4, rows.Count);
        foreach (((string? method, string? side), JsonElement row) in rows)
        {
            Assert.Equal("XCall.Tests.Contracts.IShapes", row.GetProperty("contract").GetString());
            Assert.Equal(method == "Add" ? 200 : 100, row.GetProperty("calls").GetInt64());
            Assert.Equal(0, row.GetProperty("failed").GetInt64());
            Assert.Equal(method == "Add" ? 8.0 : 12.0, row.GetProperty("requestBytesPerCall").GetDouble());
            Assert.Equal(method == "Add" ? 4.0 : 12.0, row.GetProperty("replyBytesPerCall").GetDouble());
            Assert.True(row.GetProperty("marshalP50Us").GetDouble() <= row.GetProperty("marshalP99Us").GetDouble(), $"{method} {side}: p50 > p99");
            Assert.True(row.GetProperty("totalCostUs").GetDouble() > 0, $"{method} {side}: no cost");
        }
        Assert.True(rows.ContainsKey(("Add", "client")) && rows.ContainsKey(("Add", "server")), "Add rows missing");
        Assert.True(rows.ContainsKey(("Echo", "client")) && rows.ContainsKey(("Echo", "server")), "Echo rows missing");
        double[] costs = [.. root.GetProperty("methods").EnumerateArray().Select(row => row.GetProperty("totalCostUs").GetDouble())];
        Assert.Equal(costs.OrderDescending(), costs);
    }

    [Fact]
    public async Task Collect_exits_3_when_the_process_makes_no_XCall_calls()
    {
        using TestAppProcess app = await TestAppProcess.StartAsync();
        using var collect = ChildProcess.StartXCallProfile("collect", "--pid", $"{app.Id}", "--duration", "2s");

        int exitCode = await collect.WaitForExitAsync(s_timeout);

        Assert.Equal(3, exitCode);
        Assert.Contains($"process {app.Id} made no XCall calls in 2s", collect.Error.Text);
        Assert.Equal("", collect.Output.Text);
    }
}
