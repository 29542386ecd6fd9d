using System.Globalization;
using XCall.Cluster.Tests;
using Xunit.Abstractions;

namespace XCall.Channels.Distributed.Tests;

/// <summary>
/// Named channels and a named barrier across two "machines": two network namespaces joined by a veth pair,
/// ranks 0-1 in the first, 2-3 in the second, so rank 0's channels are reached over shared memory by rank 1 and
/// over TCP by ranks 2 and 3. Needs root and iproute2; skipped with the reason otherwise.
/// </summary>
public sealed class TwoNamespaceTests(ITestOutputHelper output) : IAsyncLifetime
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(90);
    private readonly string _id = (Environment.ProcessId % 100_000).ToString(CultureInfo.InvariantCulture);
    private readonly List<string> _created = [];
    private string? _skipReason;

    private string Space(int node) => $"xcd{node}-{_id}";

    public async Task InitializeAsync()
    {
        if (Environment.UserName != "root" || !new[] { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip" }.Any(File.Exists))
        {
            _skipReason = "network namespaces need root and iproute2 (ip)";
            return;
        }
        string left = "xcdl" + _id, right = "xcdr" + _id;
        var steps = new List<string>
        {
            $"netns add {Space(0)}",
            $"netns add {Space(1)}",
            $"link add {left} type veth peer name {right}",
            $"link set {left} netns {Space(0)}",
            $"link set {right} netns {Space(1)}",
        };
        foreach ((int node, string link) in new[] { (0, left), (1, right) })
        {
            steps.Add($"-n {Space(node)} addr add 10.232.0.{node + 1}/24 dev {link}");
            steps.Add($"-n {Space(node)} link set {link} up");
            steps.Add($"-n {Space(node)} link set lo up");
        }
        foreach (string step in steps)
        {
            ProcessRun run = await ProcessRun.RunAsync("ip", step.Split(' '), s_hang);
            if (step.StartsWith("netns add", StringComparison.Ordinal) && run.ExitCode == 0)
            {
                _created.Add(step["netns add ".Length..]);
            }
            if (run.ExitCode != 0)
            {
                _skipReason = $"cannot set up network namespaces (ip {step}: {run.Output.Trim()})";
                return;
            }
        }
    }

    public async Task DisposeAsync()
    {
        foreach (string space in _created)
        {
            await ProcessRun.RunAsync("ip", ["netns", "del", space], s_hang); // the veth end inside goes with it
        }
    }

    private async Task<string[]> RunAsync(string mode)
    {
        string job = $"dns{Environment.ProcessId}{mode}";
        ProcessRun[] runs = await Task.WhenAll(Enumerable.Range(0, 4).Select(rank =>
        {
            int node = rank / 2;
            return ProcessRun.RunAsync("ip", ["netns", "exec", Space(node), "dotnet", TestPaths.TestApp, mode], s_hang, new Dictionary<string, string>
            {
                ["XCALL_RANK"] = rank.ToString(CultureInfo.InvariantCulture),
                ["XCALL_SIZE"] = "4",
                ["XCALL_JOB_ID"] = job,
                ["XCALL_NODE"] = $"node-{node}",
                ["XCALL_HOST"] = $"10.232.0.{node + 1}",
                ["XCALL_STORE"] = $"tcp://10.232.0.1:29700/xcall-store-{job}",
            });
        }));
        for (int rank = 0; rank < runs.Length; rank++)
        {
            output.WriteLine(runs[rank].Output);
            Assert.Equal(0, runs[rank].ExitCode);
        }
        Assert.Contains("rank 1 reaches rank 0 at shm://", runs[1].Output, StringComparison.Ordinal);
        Assert.Contains("rank 2 reaches rank 0 at tcp://10.232.0.1:", runs[2].Output, StringComparison.Ordinal);
        Assert.Contains("rank 3 reaches rank 0 at tcp://10.232.0.1:", runs[3].Output, StringComparison.Ordinal);
        return [.. runs.Select(r => r.Output)];
    }

    [SkippableFact]
    public async Task Every_channel_kind_works_between_two_machines()
    {
        Xunit.Skip.If(_skipReason is not null, _skipReason);
        string[] outputs = await RunAsync("kinds");
        Assert.Contains("rank 0 o2o got 101", outputs[0], StringComparison.Ordinal);
        Assert.Contains("rank 0 a2o got from 1,from 2,from 3", outputs[0], StringComparison.Ordinal);
        Assert.Contains("rank 0 o2a wrote 3 jobs", outputs[0], StringComparison.Ordinal);
        for (int rank = 1; rank < 4; rank++)
        {
            Assert.Matches($@"rank {rank} o2a got job [123] 'job [123]'", outputs[rank]);
            Assert.Matches($@"rank {rank} a2a got 300[123]", outputs[rank]);
        }
    }

    [SkippableFact]
    public async Task A_named_barrier_holds_ranks_of_two_machines()
    {
        Xunit.Skip.If(_skipReason is not null, _skipReason);
        string[] outputs = await RunAsync("barrier");
        Assert.Contains("rank 0 barrier held 4 ranks for 3 rounds: True", outputs[0], StringComparison.Ordinal);
        Assert.Contains("rank 0 bucket released 3 ranks", outputs[0], StringComparison.Ordinal);
    }
}
