using System.Globalization;
using Xunit.Abstractions;

namespace XCall.Cluster.Tests;

/// <summary>
/// Two network namespaces as two nodes joined by a veth pair: ranks 0-1 on node-a, 2-3 on node-b. Ranks of one
/// node talk over shared memory, ranks of different nodes over TCP through the veth link, and the store is
/// reached across it. Needs root and iproute2; skipped with the reason otherwise.
/// </summary>
public sealed class TwoNodeTests(ITestOutputHelper output) : IAsyncLifetime
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(60);
    private readonly string _suffix = (Environment.ProcessId % 100_000).ToString(CultureInfo.InvariantCulture);
    private string? _skipReason;
    private bool _setUp;

    private string NamespaceA => "xcall-a" + _suffix;

    private string NamespaceB => "xcall-b" + _suffix;

    public async Task InitializeAsync()
    {
        if (Environment.UserName != "root" || !File.Exists("/usr/sbin/ip") && !File.Exists("/sbin/ip") && !File.Exists("/usr/bin/ip"))
        {
            _skipReason = "network namespaces need root and iproute2 (ip)";
            return;
        }
        _setUp = true;
        string[][] setup =
        [
            ["netns", "add", NamespaceA],
            ["netns", "add", NamespaceB],
            ["link", "add", "xcva" + _suffix, "type", "veth", "peer", "name", "xcvb" + _suffix],
            ["link", "set", "xcva" + _suffix, "netns", NamespaceA],
            ["link", "set", "xcvb" + _suffix, "netns", NamespaceB],
            ["-n", NamespaceA, "addr", "add", "10.231.0.1/24", "dev", "xcva" + _suffix],
            ["-n", NamespaceB, "addr", "add", "10.231.0.2/24", "dev", "xcvb" + _suffix],
            ["-n", NamespaceA, "link", "set", "xcva" + _suffix, "up"],
            ["-n", NamespaceB, "link", "set", "xcvb" + _suffix, "up"],
            ["-n", NamespaceA, "link", "set", "lo", "up"],
            ["-n", NamespaceB, "link", "set", "lo", "up"],
        ];
        foreach (string[] step in setup)
        {
            ProcessRun run = await ProcessRun.RunAsync("ip", step, s_hang);
            if (run.ExitCode != 0)
            {
                _skipReason = $"cannot set up network namespaces (ip {string.Join(' ', step)}: {run.Output.Trim()})";
                return;
            }
        }
    }

    public async Task DisposeAsync()
    {
        if (!_setUp)
        {
            return;
        }
        foreach (string ns in new[] { NamespaceA, NamespaceB })
        {
            await ProcessRun.RunAsync("ip", ["netns", "del", ns], s_hang); // takes its end of the veth pair with it
        }
    }

    [SkippableFact]
    public async Task Ranks_use_shared_memory_inside_a_node_and_tcp_between_nodes()
    {
        Skip.If(_skipReason is not null, _skipReason);
        string job = $"netns{Environment.ProcessId}";
        ProcessRun[] runs = await Task.WhenAll(Enumerable.Range(0, 4).Select(rank =>
        {
            bool a = rank < 2;
            return ProcessRun.RunAsync("ip", ["netns", "exec", a ? NamespaceA : NamespaceB, "dotnet", TestPaths.TestApp, "world"], s_hang, new Dictionary<string, string>
            {
                ["XCALL_RANK"] = rank.ToString(CultureInfo.InvariantCulture),
                ["XCALL_SIZE"] = "4",
                ["XCALL_JOB_ID"] = job,
                ["XCALL_NODE"] = a ? "node-a" : "node-b",
                ["XCALL_HOST"] = a ? "10.231.0.1" : "10.231.0.2",
                ["XCALL_STORE"] = $"tcp://10.231.0.1:29600/xcall-store-{job}",
            });
        }));
        for (int rank = 0; rank < 4; rank++)
        {
            output.WriteLine(runs[rank].Output);
            Assert.Equal(0, runs[rank].ExitCode);
            for (int peer = 0; peer < 4; peer++)
            {
                if (peer != rank)
                {
                    string expected = rank / 2 == peer / 2 ? "shm://" : $"tcp://10.231.0.{(peer / 2) + 1}:";
                    Assert.Contains($"rank {rank} reached rank {peer} at {expected}", runs[rank].Output, StringComparison.Ordinal);
                }
            }
        }
        Assert.Contains("rank 2 found answer = 42 from rank 1", runs[2].Output, StringComparison.Ordinal);
    }
}
