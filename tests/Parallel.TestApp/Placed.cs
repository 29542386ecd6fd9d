using XCall.Cluster;
using XCall.Parallel;
using XCall.Parallel.TestApp;

[assembly: XCallWorker(typeof(PlacedSetup))]

namespace XCall.Parallel.TestApp;

/// <summary>The parallel object the worker-placement tests create on <c>xcall worker</c> hosts.</summary>
[Remotable]
public interface IPlaced
{
    /// <summary>Adds <paramref name="value"/> to the sum.</summary>
    [OneWay]
    void Add(int value);

    /// <summary>Ends its host's process with SIGKILL.</summary>
    [OneWay]
    void Die();

    /// <summary>The sum of every value added.</summary>
    long Sum();

    /// <summary>The process id of its host.</summary>
    int Pid();
}

/// <summary>The object behind <see cref="IPlaced"/>.</summary>
public sealed class Placed : IPlaced
{
    private long _sum;

    /// <inheritdoc/>
    public void Add(int value) => _sum += value;

    /// <inheritdoc/>
    public void Die()
    {
        using var self = System.Diagnostics.Process.GetCurrentProcess();
        self.Kill(); // SIGKILL on Linux
    }

    /// <inheritdoc/>
    public long Sum() => _sum;

    /// <inheritdoc/>
    public int Pid() => Environment.ProcessId;
}

/// <summary>What this program serves on a worker host (<c>xcall worker --assembly</c> runs it): objects of <see cref="IPlaced"/>.</summary>
public sealed class PlacedSetup : IWorkerSetup
{
    /// <summary>The types placed on workers.</summary>
    public static ParallelTypes Types => new ParallelTypes().Add<IPlaced>(() => new Placed(), Agglomeration.Never);

    /// <inheritdoc/>
    public Task ConfigureAsync(WorkerHost host, CancellationToken cancellationToken)
    {
        WorkerObjects.Serve(host, Types);
        return Task.CompletedTask;
    }
}
