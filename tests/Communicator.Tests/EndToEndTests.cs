using System.Globalization;
using XCall.Cluster.Tests;
using Xunit.Abstractions;

namespace XCall.Communicator.Tests;

/// <summary>The test program (tests/Communicator.TestApp) as real processes under real launchers.</summary>
public sealed class EndToEndTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(180);

    private static void AssertEveryRankPassed(string text, int ranks)
    {
        for (int rank = 0; rank < ranks; rank++)
        {
            Assert.Contains($"rank {rank} of {ranks}: all checks passed", text, StringComparison.Ordinal);
        }
        Assert.DoesNotContain("check failed", text, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(4)]
    [InlineData(8)]
    public async Task Under_xcall_run_every_check_passes_on_every_rank(int ranks)
    {
        ProcessRun run = await ProcessRun.RunAsync("dotnet",
            [TestPaths.XCall, "run", "-n", ranks.ToString(CultureInfo.InvariantCulture), "--", "dotnet", TestPaths.TestApp, "check"], s_hang);
        output.WriteLine(run.Output);
        Assert.Equal(0, run.ExitCode);
        AssertEveryRankPassed(run.Output, ranks);
        Assert.Contains("launcher XCall", run.Output, StringComparison.Ordinal);
    }

    [SkippableFact]
    public async Task Under_Open_MPI_mpirun_every_check_passes_on_four_ranks()
    {
        string? mpirun = TestPaths.FindOnPath("mpirun");
        Skip.If(mpirun is null, "mpirun is not installed (Debian: apt-get install openmpi-bin; scripts/install-peers.sh installs it)");
        ProcessRun run = await ProcessRun.RunAsync(mpirun!, ["--oversubscribe", "--allow-run-as-root", "-np", "4", "dotnet", TestPaths.TestApp, "check"], s_hang);
        output.WriteLine(run.Output);
        Assert.Equal(0, run.ExitCode);
        AssertEveryRankPassed(run.Output, 4);
        Assert.Contains("launcher OpenMpi", run.Output, StringComparison.Ordinal);
    }

    [SkippableFact]
    public async Task Under_Slurm_srun_every_check_passes_on_four_ranks()
    {
        Skip.If(TestPaths.FindOnPath("srun") is null || TestPaths.FindOnPath("slurmctld") is null,
            "Slurm is not installed (Debian: slurm-wlm or slurmctld slurmd slurm-client munge; scripts/slurm-one-node.sh install)");
        ProcessRun started = await ProcessRun.RunAsync("bash", [Path.Combine(TestPaths.Scripts, "slurm-one-node.sh"), "start"], s_hang);
        output.WriteLine(started.Output);
        Skip.If(started.ExitCode != 0, $"the one-node Slurm did not start (scripts/slurm-one-node.sh start exited with {started.ExitCode}): {started.Output}");
        string conf = started.Output.Split('\n').Single(line => line.StartsWith("SLURM_CONF=", StringComparison.Ordinal))["SLURM_CONF=".Length..].Trim();
        ProcessRun run = await ProcessRun.RunAsync("srun", ["-n", "4", "--overcommit", "dotnet", TestPaths.TestApp, "check"], s_hang,
            new Dictionary<string, string> { ["SLURM_CONF"] = conf });
        output.WriteLine(run.Output);
        Assert.Equal(0, run.ExitCode);
        AssertEveryRankPassed(run.Output, 4);
        Assert.Contains("launcher Slurm", run.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_rank_that_dies_fails_the_receives_waiting_for_it_with_an_exception_naming_it()
    {
        // Started one by one, without a launcher that would end them: the survivors see the failure themselves.
        ProcessRun[] runs = await ProcessRun.RunWorldAsync("dotnet", [TestPaths.TestApp, "fail", "5"], 3, s_hang);
        output.WriteLine(string.Join("\n", runs.Select(r => r.Output)));
        Assert.Equal([7, 7, 5], runs.Select(r => r.ExitCode));
        Assert.All(runs[..2].Select((run, rank) => (run.Output, rank)), survivor =>
            Assert.Contains($"rank {survivor.rank} saw: Rank 2 failed:", survivor.Output, StringComparison.Ordinal));
    }
}
