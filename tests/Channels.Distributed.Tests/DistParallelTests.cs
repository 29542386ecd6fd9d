using XCall.Channels.Distributed.TestApp;
using XCall.Cluster;
using XCall.Cluster.Tests;
using Xunit.Abstractions;

namespace XCall.Channels.Distributed.Tests;

/// <summary>
/// DistParallel from this process (a world of one, sharing names through this machine's directory) to real
/// <c>xcall worker</c> processes that load tests/Channels.Distributed.TestApp, each in a pool of its own.
/// </summary>
public sealed class DistParallelTests(ITestOutputHelper output) : IAsyncLifetime
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(60);
    private readonly string _pool = $"dp{Environment.ProcessId}-{Guid.NewGuid():N}"[..24];
    private readonly List<RunningWorker> _workers = [];
    private ClusterWorld _cluster = null!;
    private CspWorld _csp = null!;

    public async Task InitializeAsync()
    {
        WorldEnvironment alone = WorldEnvironment.Detect() with { JobId = _pool };
        _cluster = await ClusterWorld.JoinAsync(new ClusterOptions { Environment = alone });
        _csp = CspWorld.Attach(_cluster);
    }

    public async Task DisposeAsync()
    {
        foreach (RunningWorker worker in _workers)
        {
            output.WriteLine($"--- {worker.Name} (pid {worker.Pid})\n{worker.Output}");
            await worker.DisposeAsync();
        }
        await _csp.DisposeAsync();
        await _cluster.DisposeAsync();
    }

    [Fact]
    public async Task DistParallel_with_two_workers_runs_every_process_on_them_with_its_fields_and_returns()
    {
        (DistParallel run, SumReport[] reports) = await RunGatedAsync([[1, 2, 3], [10, 20, 30, 40]]);

        Assert.Equal(_workers.Select(w => w.Name).Order(), run.Placements.Order());
        Assert.Equal([6L, 100L], reports.Select(r => r.Sum).Order());
        Assert.Equal(PidOf(run.Placements[0]), reports.Single(r => r.Sum == 6).Pid);
        Assert.Equal(PidOf(run.Placements[1]), reports.Single(r => r.Sum == 100).Pid);
    }

    [Fact]
    public async Task More_processes_than_free_workers_run_the_rest_here_at_the_same_time()
    {
        // All five run at once (they meet at a barrier before they report): two on the workers, three here.
        (DistParallel run, SumReport[] reports) = await RunGatedAsync([.. Enumerable.Range(1, 5).Select(n => Enumerable.Range(1, n).ToArray())]);

        Assert.Equal(_workers.Select(w => w.Name).Order(), run.Placements.Where(p => p != DistParallel.Local).Order());
        Assert.Equal(3, run.Placements.Count(p => p == DistParallel.Local));
        Assert.Equal([1L, 3L, 6L, 10L, 15L], reports.Select(r => r.Sum).Order());
        for (int i = 0; i < 5; i++)
        {
            long sum = (i + 1) * (i + 2) / 2;
            int expected = run.Placements[i] == DistParallel.Local ? Environment.ProcessId : PidOf(run.Placements[i]);
            Assert.Equal(expected, reports.Single(r => r.Sum == sum).Pid);
        }
    }

    [Fact]
    public async Task A_worker_killed_with_sigkill_fails_exactly_its_process_and_the_others_finish()
    {
        await StartWorkersAsync(2);
        string result = Unique("sums");
        Any2One<SumReport> sums = await _csp.CreateAny2OneAsync<SumReport>(result);
        var run = new DistParallel(_csp, TestProcesses.Kinds,
            new DieProcess(Environment.ProcessId),
            new SumProcess(result, [1, 2], "", 0),
            new SumProcess(result, [3, 4], "", 0)) { Pool = _pool };

        Task<SumReport[]> reading = ReadAsync(sums, 2);
        AggregateException failed = await Assert.ThrowsAsync<AggregateException>(() => run.RunAsync().WaitAsync(s_hang));
        SumReport[] reports = await reading;

        output.WriteLine(failed.ToString());
        WorkerFailedException died = Assert.IsType<WorkerFailedException>(Assert.Single(failed.InnerExceptions));
        Assert.Equal(run.Placements[0], died.Worker);
        Assert.Contains("DieProcess", died.Message, StringComparison.Ordinal);
        RunningWorker killed = _workers.Single(w => w.Name == died.Worker);
        await killed.WaitForExitAsync(s_hang);
        Assert.Equal(_workers.Single(w => w != killed).Name, run.Placements[1]);
        Assert.Equal(DistParallel.Local, run.Placements[2]);
        Assert.Equal([3L, 7L], reports.Select(r => r.Sum).Order());
    }

    [Fact]
    public async Task A_worker_named_by_its_tcp_address_runs_the_process_over_tcp()
    {
        RunningWorker worker = await RunningWorker.StartAsync(TestPaths.XCall, TestPaths.TestApp, _pool, s_hang, "--listen", "tcp://127.0.0.1:0/xcall-worker-tcp");
        _workers.Add(worker);
        string address = Assert.IsType<string>(worker.ListenAddress);
        Assert.StartsWith("tcp://127.0.0.1:", address, StringComparison.Ordinal);
        string result = Unique("sums");
        Any2One<SumReport> sums = await _csp.CreateAny2OneAsync<SumReport>(result);
        var run = new DistParallel(_csp, TestProcesses.Kinds, new SumProcess(result, [20, 22], "", 0))
        {
            Workers = [new WorkerInfo("far", address, 0)],
        };

        Task<SumReport[]> reading = ReadAsync(sums, 1);
        await run.RunAsync().WaitAsync(s_hang);

        Assert.Equal(["far"], run.Placements);
        Assert.Equal(new SumReport(42, worker.Pid), Assert.Single(await reading));
    }

    [Fact]
    public async Task Stand_alone_DistParallel_runs_every_process_here()
    {
        CspWorld alone = CspWorld.StandAlone();
        string result = Unique("sums");
        Any2One<SumReport> sums = await alone.CreateAny2OneAsync<SumReport>(result);
        var run = new DistParallel(alone, TestProcesses.Kinds, new SumProcess(result, [5], "", 0), new SumProcess(result, [7], "", 0));

        Task<SumReport[]> reading = ReadAsync(sums, 2);
        await run.RunAsync().WaitAsync(s_hang);

        Assert.Equal([DistParallel.Local, DistParallel.Local], run.Placements);
        Assert.Equal([5L, 7L], (await reading).Select(r => r.Sum).Order());
        Assert.All(await reading, r => Assert.Equal(Environment.ProcessId, r.Pid));
    }

    /// <summary>
    /// With two workers, runs a <see cref="SumProcess"/> of each set of values; every process and this test meet
    /// at a named barrier first, so all run at once; returns the run and the reports in the order they came.
    /// </summary>
    private async Task<(DistParallel Run, SumReport[] Reports)> RunGatedAsync(int[][] values)
    {
        await StartWorkersAsync(2);
        string result = Unique("sums");
        string gate = Unique("gate");
        int parties = values.Length + 1;
        Any2One<SumReport> sums = await _csp.CreateAny2OneAsync<SumReport>(result);
        NamedBarrier start = await _csp.BarrierAsync(gate, parties);
        var run = new DistParallel(_csp, TestProcesses.Kinds, values.Select(v => (IProcess)new SumProcess(result, v, gate, parties))) { Pool = _pool };
        Task running = run.RunAsync();
        await start.SyncAsync().WaitAsync(s_hang);
        SumReport[] reports = await ReadAsync(sums, values.Length);
        await running.WaitAsync(s_hang);
        return (run, reports);
    }

    private async Task StartWorkersAsync(int count)
    {
        RunningWorker[] started = await Task.WhenAll(Enumerable.Range(0, count)
            .Select(_ => RunningWorker.StartAsync(TestPaths.XCall, TestPaths.TestApp, _pool, s_hang)));
        _workers.AddRange(started);
    }

    private int PidOf(string worker) => _workers.Single(w => w.Name == worker).Pid;

    private string Unique(string what) => $"{what}-{_pool}";

    private static async Task<SumReport[]> ReadAsync(Any2One<SumReport> channel, int count)
    {
        var reports = new SumReport[count];
        for (int i = 0; i < count; i++)
        {
            reports[i] = await channel.In.ReadAsync().AsTask().WaitAsync(s_hang);
        }
        return reports;
    }
}
