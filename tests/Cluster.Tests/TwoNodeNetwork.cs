using System.Globalization;

namespace XCall.Cluster.Tests;

/// <summary>
/// Two network namespaces joined by a veth pair, as two machines: node 0 at 10.<c>subnet</c>.0.1, node 1 at
/// 10.<c>subnet</c>.0.2. A world of four ranks runs ranks 0-1 on node 0 and 2-3 on node 1, with the store on
/// rank 0's node, so ranks of one node talk over shared memory and ranks of different nodes over TCP through
/// the link. Needs root and iproute2: <see cref="SkipReason"/> says why when it cannot be set up.
/// </summary>
/// <param name="prefix">Starts the namespaces' and links' names; unique per test class.</param>
/// <param name="subnet">The second octet of the link's 10.x.0.0/24 network; unique per test class.</param>
/// <param name="storePort">The TCP port of rank 0's store.</param>
internal sealed class TwoNodeNetwork(string prefix, int subnet, int storePort)
{
    private static readonly TimeSpan s_setupHang = TimeSpan.FromSeconds(60);
    private readonly string _id = (Environment.ProcessId % 100_000).ToString(CultureInfo.InvariantCulture);
    private readonly List<string> _created = [];

    /// <summary>Why the namespaces could not be set up; null once they are.</summary>
    public string? SkipReason { get; private set; } = "not set up yet";

    /// <summary>The namespace of <paramref name="node"/> (0 or 1).</summary>
    public string Space(int node) => $"{prefix}{node}-{_id}";

    /// <summary>The address of <paramref name="node"/> (0 or 1) on the link.</summary>
    public string Host(int node) => $"10.{subnet}.0.{node + 1}";

    /// <summary>Creates the namespaces and the link between them; on failure sets <see cref="SkipReason"/>.</summary>
    public async Task SetUpAsync()
    {
        if (Environment.UserName != "root" || !new[] { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip" }.Any(File.Exists))
        {
            SkipReason = "network namespaces need root and iproute2 (ip)";
            return;
        }
        string left = $"{prefix}l{_id}", right = $"{prefix}r{_id}";
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
            steps.Add($"-n {Space(node)} addr add {Host(node)}/24 dev {link}");
            steps.Add($"-n {Space(node)} link set {link} up");
            steps.Add($"-n {Space(node)} link set lo up");
        }
        foreach (string step in steps)
        {
            ProcessRun run = await ProcessRun.RunAsync("ip", step.Split(' '), s_setupHang);
            if (run.ExitCode != 0)
            {
                SkipReason = $"cannot set up network namespaces (ip {step}: {run.Output.Trim()})";
                return;
            }
            if (step.StartsWith("netns add ", StringComparison.Ordinal))
            {
                _created.Add(step["netns add ".Length..]);
            }
        }
        SkipReason = null;
    }

    /// <summary>Deletes the namespaces (each takes its end of the link with it).</summary>
    public async Task TearDownAsync()
    {
        foreach (string space in _created)
        {
            await ProcessRun.RunAsync("ip", ["netns", "del", space], s_setupHang);
        }
        _created.Clear();
    }

    /// <summary>
    /// Runs <c>dotnet <paramref name="program"/> <paramref name="arguments"/></c> as the four ranks of a new world
    /// (XCall's variables: rank, size, job, node, host and the store's address), two per node.
    /// </summary>
    public Task<ProcessRun[]> RunWorldAsync(string program, IEnumerable<string> arguments, TimeSpan hang)
    {
        string job = $"{prefix}{Environment.ProcessId}-{Guid.NewGuid():N}"[..20];
        return Task.WhenAll(Enumerable.Range(0, 4).Select(rank =>
        {
            int node = rank / 2;
            return ProcessRun.RunAsync("ip", ["netns", "exec", Space(node), "dotnet", program, .. arguments], hang, new Dictionary<string, string>
            {
                ["XCALL_RANK"] = rank.ToString(CultureInfo.InvariantCulture),
                ["XCALL_SIZE"] = "4",
                ["XCALL_JOB_ID"] = job,
                ["XCALL_NODE"] = $"node-{node}",
                ["XCALL_HOST"] = Host(node),
                ["XCALL_STORE"] = $"tcp://{Host(0)}:{storePort}/xcall-store-{job}",
            });
        }));
    }
}
