using System.Text.RegularExpressions;
using XCall.Cluster.Tests;
using Xunit.Abstractions;

namespace XCall.Channels.Distributed.Tests;

/// <summary>The distributed samples as three OS processes under <c>xcall run -n 3</c> and unchanged in one.</summary>
public sealed partial class SampleTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(90);

    private async Task<string> RunAsync(params string[] arguments)
    {
        ProcessRun run = await ProcessRun.RunAsync("dotnet", arguments, s_hang);
        output.WriteLine(run.Output);
        Assert.Equal(0, run.ExitCode);
        return run.Output;
    }

    [Fact]
    public async Task AltReader_reads_both_remote_AddIntegers_to_a_zero_result()
    {
        string alone = await RunAsync(TestPaths.NetAltReader);
        string world = await RunAsync(TestPaths.XCall, "run", "-n", "3", "--", "dotnet", TestPaths.NetAltReader);
        Assert.Contains("result 0 after 200 values", alone, StringComparison.Ordinal);
        Assert.Contains("[0] result 0 after 200 values", world, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Distributed_pi_over_three_processes_counts_what_the_stand_alone_run_counts()
    {
        string alone = await RunAsync(TestPaths.DistributedPi, "3e5", "3");
        string world = await RunAsync(TestPaths.XCall, "run", "-n", "3", "--", "dotnet", TestPaths.DistributedPi, "3e5");
        string Pi(string text) => PiLine().Match(text) is { Success: true } m ? m.Groups[1].Value : $"no pi line in: {text}";
        Assert.Equal(Pi(alone), Pi(world)); // the same seeds per rank: the same darts land
        double pi = double.Parse(Pi(world), System.Globalization.CultureInfo.InvariantCulture);
        Assert.InRange(pi, 3.1, 3.2);
        Assert.Contains("on 3 process(es) in one OS process", alone, StringComparison.Ordinal);
    }

    [Fact]
    public async Task WorkerPool_ships_two_Workers_to_the_worker_ranks_and_runs_every_job()
    {
        string alone = await RunAsync(TestPaths.WorkerPool);
        string world = await RunAsync(TestPaths.XCall, "run", "-n", "3", "--", "dotnet", TestPaths.WorkerPool);
        Assert.Contains("the Workers ran on: local, local, local", alone, StringComparison.Ordinal);
        Assert.Contains("[0] the Workers ran on: rank1, rank2, local", world, StringComparison.Ordinal);
        foreach (string text in (string[])[alone, world])
        {
            Assert.Contains("10 jobs done", text, StringComparison.Ordinal);
            long[] ids = [.. JobLine().Matches(text).Select(m => long.Parse(m.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture)).Order()];
            Assert.Equal([.. Enumerable.Range(0, 10).Select(i => (long)i)], ids);
            foreach (Match line in JobLine().Matches(text))
            {
                long n = long.Parse(line.Groups[2].Value, System.Globalization.CultureInfo.InvariantCulture);
                Assert.Equal(n * (n + 1) / 2, long.Parse(line.Groups[3].Value, System.Globalization.CultureInfo.InvariantCulture));
            }
        }
    }

    [GeneratedRegex(@"job (\d+): sum 1\.\.(\d+) = (\d+), on rank")]
    private static partial Regex JobLine();

    [GeneratedRegex(@"pi ~ (\d\.\d+) from 300,000 darts on 3 process")]
    private static partial Regex PiLine();
}
