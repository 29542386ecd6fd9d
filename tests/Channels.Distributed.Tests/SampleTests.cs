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

    [GeneratedRegex(@"pi ~ (\d\.\d+) from 300,000 darts on 3 process")]
    private static partial Regex PiLine();
}
