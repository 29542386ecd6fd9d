using XCall.Cluster.Tests;
using Xunit.Abstractions;

namespace XCall.Communicator.Tests;

/// <summary>
/// The communicator's checks (matching, every collective, Split) on four ranks of two "machines": two network
/// namespaces (<see cref="TwoNodeNetwork"/>), ranks 0-1 on one and 2-3 on the other, so messages inside a node
/// go over shared memory and between nodes over TCP. Needs root and iproute2; skipped with the reason otherwise.
/// </summary>
public sealed class TwoNodeTests(ITestOutputHelper output) : IAsyncLifetime
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(180);
    private readonly TwoNodeNetwork _network = new("xcm", 233, 29800);

    public Task InitializeAsync() => _network.SetUpAsync();

    public Task DisposeAsync() => _network.TearDownAsync();

    [SkippableFact]
    public async Task Every_check_passes_with_two_ranks_on_each_of_two_nodes()
    {
        Skip.If(_network.SkipReason is not null, _network.SkipReason);
        ProcessRun[] runs = await _network.RunWorldAsync(TestPaths.TestApp, ["check"], s_hang);
        for (int rank = 0; rank < 4; rank++)
        {
            output.WriteLine(runs[rank].Output);
            Assert.Equal(0, runs[rank].ExitCode);
            Assert.Contains($"rank {rank} of 4: all checks passed", runs[rank].Output, StringComparison.Ordinal);
            for (int peer = 0; peer < 4; peer++)
            {
                if (peer != rank)
                {
                    string expected = rank / 2 == peer / 2 ? "shm://" : $"tcp://{_network.Host(peer / 2)}:";
                    Assert.Contains($"rank {rank} reaches rank {peer} at {expected}", runs[rank].Output, StringComparison.Ordinal);
                }
            }
        }
    }
}
