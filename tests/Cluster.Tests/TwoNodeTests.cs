using Xunit.Abstractions;

namespace XCall.Cluster.Tests;

/// <summary>
/// Two network namespaces as two nodes (<see cref="TwoNodeNetwork"/>): ranks 0-1 on one, 2-3 on the other. Ranks
/// of one node talk over shared memory, ranks of different nodes over TCP through the link, and the store is
/// reached across it. Needs root and iproute2; skipped with the reason otherwise.
/// </summary>
public sealed class TwoNodeTests(ITestOutputHelper output) : IAsyncLifetime
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(60);
    private readonly TwoNodeNetwork _network = new("xcn", 231, 29600);

    public Task InitializeAsync() => _network.SetUpAsync();

    public Task DisposeAsync() => _network.TearDownAsync();

    [SkippableFact]
    public async Task Ranks_use_shared_memory_inside_a_node_and_tcp_between_nodes()
    {
        Skip.If(_network.SkipReason is not null, _network.SkipReason);
        ProcessRun[] runs = await _network.RunWorldAsync(TestPaths.TestApp, ["world"], s_hang);
        for (int rank = 0; rank < 4; rank++)
        {
            output.WriteLine(runs[rank].Output);
            Assert.Equal(0, runs[rank].ExitCode);
            for (int peer = 0; peer < 4; peer++)
            {
                if (peer != rank)
                {
                    string expected = rank / 2 == peer / 2 ? "shm://" : $"tcp://{_network.Host(peer / 2)}:";
                    Assert.Contains($"rank {rank} reached rank {peer} at {expected}", runs[rank].Output, StringComparison.Ordinal);
                }
            }
        }
        Assert.Contains("rank 2 found answer = 42 from rank 1", runs[2].Output, StringComparison.Ordinal);
    }
}
