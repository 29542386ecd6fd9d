using System.Diagnostics;
using System.Text.RegularExpressions;
using Xunit.Abstractions;

namespace XCall.Cluster.Tests;

/// <summary>The test program (tests/Cluster.TestApp) as real processes under real launchers.</summary>
public sealed partial class EndToEndTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(60);
    private static readonly string s_testApp = TestPaths.TestApp;
    private static readonly string s_xcall = TestPaths.XCall;

    private async Task<ProcessRun> XCallRunAsync(int ranks, params string[] appArguments)
    {
        ProcessRun run = await ProcessRun.RunAsync("dotnet", [s_xcall, "run", "-n", ranks.ToString(System.Globalization.CultureInfo.InvariantCulture), "--", "dotnet", s_testApp, .. appArguments], s_hang);
        output.WriteLine(run.Output);
        return run;
    }

    /// <summary>Every rank's lines (after <paramref name="prefix"/> of the rank, as the launcher prints them) say it reached every other rank, and rank 2 found rank 1's name.</summary>
    private static void AssertEveryRankFoundEveryOther(string text, int ranks, Func<int, string> prefix)
    {
        for (int rank = 0; rank < ranks; rank++)
        {
            for (int peer = 0; peer < ranks; peer++)
            {
                if (peer != rank)
                {
                    Assert.Contains($"{prefix(rank)}rank {rank} reached rank {peer} at shm://", text, StringComparison.Ordinal);
                }
            }
            Assert.Contains($"{prefix(rank)}rank {rank} done", text, StringComparison.Ordinal);
        }
        Assert.Contains($"{prefix(2)}rank 2 found answer = 42 from rank 1", text, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Under_xcall_run_every_rank_finds_every_other_and_the_names()
    {
        ProcessRun run = await XCallRunAsync(3, "world");
        Assert.Equal(0, run.ExitCode);
        AssertEveryRankFoundEveryOther(run.Output, 3, rank => $"[{rank}] ");
        Assert.Contains("launcher XCall", run.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Under_xcall_run_a_failing_rank_ends_the_others_and_sets_the_exit_code()
    {
        // The other ranks hold on after they saw the failure: only xcall run ends them.
        ProcessRun run = await XCallRunAsync(3, "fail-hold", "3");
        Assert.Equal(3, run.ExitCode);
        Assert.Contains("xcall run: rank 2 exited with code 3; ending the other ranks.", run.Output, StringComparison.Ordinal);
        foreach (Match joined in JoinedLine().Matches(run.Output))
        {
            int pid = int.Parse(joined.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
            Assert.False(IsRunning(pid), $"rank process {pid} still runs after xcall run ended");
        }
        Assert.Equal(3, JoinedLine().Matches(run.Output).Count);
    }

    [Fact]
    public async Task A_rank_that_dies_fails_the_others_waits_with_an_exception_naming_it()
    {
        // Started one by one, without a launcher that would end them: the survivors see the failure themselves.
        ProcessRun[] runs = await ProcessRun.RunWorldAsync("dotnet", [s_testApp, "fail", "5"], 3, s_hang);
        foreach (ProcessRun run in runs)
        {
            output.WriteLine(run.Output);
        }
        Assert.Equal(5, runs[2].ExitCode);
        for (int rank = 0; rank < 2; rank++)
        {
            Assert.Equal(7, runs[rank].ExitCode);
            Assert.Contains($"rank {rank} saw: Rank 2 failed:", runs[rank].Output, StringComparison.Ordinal);
            Assert.Contains($"rank {rank} open: Rank 2 failed:", runs[rank].Output, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task A_rank_that_stops_answering_is_taken_for_failed_by_the_heartbeat()
    {
        using var endStopped = new CancellationTokenSource();
        Task<ProcessRun>[] ranks = ProcessRun.StartWorld("dotnet", [s_testApp, "stop"], 3, s_hang, rank => rank == 2 ? endStopped.Token : default);
        ProcessRun[] survivors = await Task.WhenAll(ranks[0], ranks[1]);
        await endStopped.CancelAsync(); // SIGKILL ends a stopped process
        ProcessRun stopped = await ranks[2];
        output.WriteLine(string.Join("\n", survivors.Select(r => r.Output)) + stopped.Output);
        Assert.Contains("rank 2 stops itself", stopped.Output, StringComparison.Ordinal);
        for (int rank = 0; rank < 2; rank++)
        {
            Assert.Equal(7, survivors[rank].ExitCode);
            Assert.Contains($"rank {rank} saw: Rank 2 failed:", survivors[rank].Output, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task Programs_started_alone_on_one_machine_resolve_each_others_names()
    {
        string name = $"e2e-{Guid.NewGuid():N}";
        Task<ProcessRun> finder = ProcessRun.RunAsync("dotnet", [s_testApp, "names-find", name], s_hang);
        Task<ProcessRun> offerer = ProcessRun.RunAsync("dotnet", [s_testApp, "names-offer", name, "tcp://127.0.0.1:9/x"], s_hang);
        ProcessRun[] runs = await Task.WhenAll(finder, offerer);
        output.WriteLine(runs[0].Output + runs[1].Output);
        Assert.Equal((0, 0), (runs[0].ExitCode, runs[1].ExitCode));
        Assert.Contains($"found {name} = tcp://127.0.0.1:9/x", runs[0].Output, StringComparison.Ordinal);
        Assert.Contains("launcher None", runs[0].Output, StringComparison.Ordinal);
    }

    [SkippableFact]
    public async Task Under_Open_MPI_mpirun_every_rank_finds_every_other_and_the_names()
    {
        string? mpirun = FindOnPath("mpirun");
        Skip.If(mpirun is null, "mpirun is not installed (Debian: apt-get install openmpi-bin)");
        ProcessRun run = await ProcessRun.RunAsync(mpirun!, ["--oversubscribe", "--allow-run-as-root", "-np", "3", "dotnet", s_testApp, "world"], s_hang);
        output.WriteLine(run.Output);
        Assert.Equal(0, run.ExitCode);
        Assert.Contains("launcher OpenMpi", run.Output, StringComparison.Ordinal);
        AssertEveryRankFoundEveryOther(run.Output, 3, _ => "");
    }

    private static bool IsRunning(int pid)
    {
        try
        {
            using Process process = Process.GetProcessById(pid);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }

    private static string? FindOnPath(string program) =>
        (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries)
            .Select(dir => Path.Combine(dir, program)).FirstOrDefault(File.Exists);

    [GeneratedRegex(@"rank \d+ of 3 joined \(.*pid (\d+)\)")]
    private static partial Regex JoinedLine();
}
