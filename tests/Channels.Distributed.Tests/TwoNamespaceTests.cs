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
    private readonly TwoNodeNetwork _network = new("xcd", 232, 29700);

    public Task InitializeAsync() => _network.SetUpAsync();

    public Task DisposeAsync() => _network.TearDownAsync();

    private async Task<string[]> RunAsync(string mode)
    {
        ProcessRun[] runs = await _network.RunWorldAsync(TestPaths.TestApp, [mode], s_hang);
        for (int rank = 0; rank < runs.Length; rank++)
        {
            output.WriteLine(runs[rank].Output);
            Assert.Equal(0, runs[rank].ExitCode);
        }
        Assert.Contains("rank 1 reaches rank 0 at shm://", runs[1].Output, StringComparison.Ordinal);
        Assert.Contains($"rank 2 reaches rank 0 at tcp://{_network.Host(0)}:", runs[2].Output, StringComparison.Ordinal);
        Assert.Contains($"rank 3 reaches rank 0 at tcp://{_network.Host(0)}:", runs[3].Output, StringComparison.Ordinal);
        return [.. runs.Select(r => r.Output)];
    }

    [SkippableFact]
    public async Task Every_channel_kind_works_between_two_machines()
    {
        Xunit.Skip.If(_network.SkipReason is not null, _network.SkipReason);
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
        Xunit.Skip.If(_network.SkipReason is not null, _network.SkipReason);
        string[] outputs = await RunAsync("barrier");
        Assert.Contains("rank 0 barrier held 4 ranks for 3 rounds: True", outputs[0], StringComparison.Ordinal);
        Assert.Contains("rank 0 bucket released 3 ranks", outputs[0], StringComparison.Ordinal);
    }
}
