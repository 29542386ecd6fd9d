using System.Reflection;
using XCall.Cluster;
using XCall.Cluster.Tests;
using XCall.Parallel.TestApp;
using Xunit.Abstractions;

namespace XCall.Parallel.Tests;

/// <summary>
/// Parallel objects placed on two real <c>xcall worker</c> processes that load tests/Parallel.TestApp, from this
/// process (a world of one that finds the workers of its own pool in this machine's directory).
/// </summary>
public sealed class WorkerPlacementTests(ITestOutputHelper output) : IAsyncLifetime
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(60);
    private static readonly string s_testApp = Metadata("TestAppPath");
    private static readonly string s_xcall = Metadata("XCallPath");
    private readonly string _pool = $"po{Environment.ProcessId}-{Guid.NewGuid():N}"[..24];
    private RunningWorker[] _workers = [];
    private ClusterWorld _cluster = null!;
    private WorkerObjects _objects = null!;

    public async Task InitializeAsync()
    {
        _workers = await Task.WhenAll(Enumerable.Range(0, 2).Select(_ => RunningWorker.StartAsync(s_xcall, s_testApp, _pool, s_hang)));
        _cluster = await ClusterWorld.JoinAsync(new ClusterOptions { Environment = WorldEnvironment.Detect() with { JobId = _pool } });
        _objects = await WorkerObjects.ConnectAsync(_cluster, PlacedSetup.Types, _pool);
    }

    public async Task DisposeAsync()
    {
        await _objects.DisposeAsync();
        await _cluster.DisposeAsync();
        foreach (RunningWorker worker in _workers)
        {
            output.WriteLine($"--- {worker.Name} (pid {worker.Pid})\n{worker.Output}");
            await worker.DisposeAsync();
        }
    }

    [Fact]
    public async Task Objects_go_to_the_least_loaded_workers_and_a_call_sees_every_earlier_one_way_call()
    {
        Assert.Equal(_workers.Select(w => w.Name).Order(), _objects.Workers.Select(w => w.Name).Order());
        IPlaced first = await _objects.CreateAsync<IPlaced>();
        IPlaced second = await _objects.CreateAsync<IPlaced>();

        Assert.NotEqual(_objects.WorkerOf(first).Name, _objects.WorkerOf(second).Name);
        Assert.Equal(_workers.Select(w => w.Pid).Order(), new[] { first.Pid(), second.Pid() }.Order());
        Assert.Equal(PidOf(_objects.WorkerOf(first).Name), first.Pid());
        for (int i = 1; i <= 10_000; i++)
        {
            first.Add(i);
            second.Add(2 * i);
        }
        Assert.Equal(50_005_000L, first.Sum());
        Assert.Equal(100_010_000L, second.Sum());
    }

    [Fact]
    public async Task A_worker_killed_with_sigkill_fails_the_callers_of_its_objects_clearly_and_the_other_goes_on()
    {
        WorkerInfo doomed = _objects.Workers[0];
        IPlaced victim = await _objects.CreateOnAsync<IPlaced>(doomed);
        IPlaced survivor = await _objects.CreateOnAsync<IPlaced>(_objects.Workers[1]);
        victim.Add(1);
        Assert.Equal(1L, victim.Sum());

        victim.Die();
        XCallDisconnectedException failed = Assert.Throws<XCallDisconnectedException>(() => victim.Sum());
        output.WriteLine(failed.ToString());
        Assert.Contains($"worker {doomed.Name}, which hosts the object, failed", failed.Message, StringComparison.Ordinal);
        Assert.Equal(doomed.Name, Assert.IsType<WorkerFailedException>(failed.InnerException).Worker);
        await _workers.Single(w => w.Name == doomed.Name).WaitForExitAsync(s_hang);
        Assert.Throws<XCallDisconnectedException>(() => victim.Pid()); // and every later call

        survivor.Add(5);
        Assert.Equal(5L, survivor.Sum());
        Assert.Equal(PidOf(_objects.Workers[1].Name), survivor.Pid());
    }

    private int PidOf(string worker) => _workers.Single(w => w.Name == worker).Pid;

    private static string Metadata(string key) => Path.GetFullPath(typeof(WorkerPlacementTests).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == key).Value!);
}
