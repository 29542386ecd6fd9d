using XCall.Cli;

namespace XCall.Cluster.Tests;

/// <summary>Worker hosts on ranks of a world of this process, their slots, and <c>xcall worker</c>'s command line.</summary>
public sealed class WorkerHostTests
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task A_rank_serving_as_a_worker_is_found_by_the_other_ranks_with_its_slots_and_address()
    {
        ClusterWorld[] worlds = await InProcessWorldTests.JoinAsync(3, "shm://xcall-store-JOB");
        try
        {
            Task<IReadOnlyList<WorkerInfo>> waiting = worlds[0].WaitForWorkerRanksAsync(s_hang, "pool-a");
            await using WorkerHost one = await WorkerHost.StartAsync(worlds[1], new WorkerHostOptions { Pool = "pool-a", Slots = 2 });
            await using WorkerHost two = await WorkerHost.StartAsync(worlds[2], new WorkerHostOptions { Pool = "pool-a" });
            await using WorkerHost other = await WorkerHost.StartAsync(worlds[2], new WorkerHostOptions { Pool = "pool-b" });

            IReadOnlyList<WorkerInfo> waited = await waiting.WaitAsync(s_hang);
            IReadOnlyList<WorkerInfo> found = await worlds[0].FindWorkersAsync("pool-a");

            WorkerInfo[] expected = [new("rank1", worlds[0].GetAddress(1), 2), new("rank2", worlds[0].GetAddress(2), 1)];
            Assert.Equal(expected, waited);
            Assert.Equal(expected, found);
            Assert.StartsWith("shm://", found[0].Address, StringComparison.Ordinal); // one node: shared memory
            Assert.Equal([new WorkerInfo("rank2", worlds[1].GetAddress(2), 1)], await worlds[1].FindWorkersAsync("pool-b"));
            Assert.Empty(await worlds[2].FindWorkersAsync("pool-b")); // a worker does not find itself
            Assert.Equal("rank1", one.Name);
        }
        finally
        {
            await InProcessWorldTests.LeaveAsync(worlds);
        }
    }

    [Fact]
    public async Task Slots_are_taken_up_to_the_count_and_only_taken_ones_come_back()
    {
        ClusterWorld[] worlds = await InProcessWorldTests.JoinAsync(1, "shm://xcall-store-JOB");
        try
        {
            await using WorkerHost host = await WorkerHost.StartAsync(worlds[0], new WorkerHostOptions { Pool = "slots", Slots = 2 });
            Assert.True(host.TryTakeSlot());
            Assert.True(host.TryTakeSlot());
            Assert.False(host.TryTakeSlot());
            Assert.Equal(0, host.FreeSlots);
            host.ReturnSlot();
            Assert.True(host.TryTakeSlot());
            host.ReturnSlot();
            host.ReturnSlot();
            Assert.Throws<InvalidOperationException>(host.ReturnSlot);
            Assert.Equal(2, host.FreeSlots);
        }
        finally
        {
            await InProcessWorldTests.LeaveAsync(worlds);
        }
    }

    [Fact]
    public void Worker_arguments_are_parsed_and_mistakes_named()
    {
        WorkerSettings settings = CommandLine.ParseWorker(["--assembly", "app.dll", "--pool", "p", "--slots", "3", "--listen", "tcp://0.0.0.0:7000/w"], out string? error)!;
        Assert.Null(error);
        Assert.Equal(new WorkerSettings("app.dll", "p", 3, "tcp://0.0.0.0:7000/w"), settings);
        Assert.Equal(new WorkerSettings("app.dll", null, 1, null), CommandLine.ParseWorker(["--assembly", "app.dll"], out _));

        Assert.Null(CommandLine.ParseWorker(["--pool", "p"], out error));
        Assert.Contains("--assembly", error, StringComparison.Ordinal);
        Assert.Null(CommandLine.ParseWorker(["--assembly", "a.dll", "--slots", "0"], out error));
        Assert.Contains("at least 1", error, StringComparison.Ordinal);
        Assert.Null(CommandLine.ParseWorker(["--assembly"], out error));
        Assert.Contains("needs a value", error, StringComparison.Ordinal);
        Assert.Null(CommandLine.ParseWorker(["--assembly", "a.dll", "--frobnicate", "x"], out error));
        Assert.Contains("unknown option '--frobnicate'", error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Xcall_worker_refuses_a_program_that_names_no_worker_setup()
    {
        ProcessRun run = await ProcessRun.RunAsync("dotnet", [TestPaths.XCall, "worker", "--assembly", TestPaths.TestApp], s_hang);
        Assert.Equal(2, run.ExitCode);
        Assert.Contains("XCall.Cluster.TestApp names no worker setup: add [assembly: XCall.Cluster.XCallWorker(typeof(YourSetup))]", run.Output, StringComparison.Ordinal);
        ProcessRun missing = await ProcessRun.RunAsync("dotnet", [TestPaths.XCall, "worker", "--assembly", "/nonexistent/app.dll"], s_hang);
        Assert.Equal(2, missing.ExitCode);
        Assert.Contains("no assembly at '/nonexistent/app.dll'", missing.Output, StringComparison.Ordinal);
    }
}
