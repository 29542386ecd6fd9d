using System.Globalization;

namespace XCall.Cluster;

/// <summary>
/// A worker host: a process of a <see cref="ClusterWorld"/> (a rank started by <c>xcall run</c>, <c>mpirun</c> or
/// <c>srun</c>, or a world of one started by <c>xcall worker</c>) whose <see cref="Services"/> other processes use
/// to run work there: the processes <c>DistParallel</c> ships and the parallel objects placed there. Once
/// started it is announced in the world's name directory (a rank) or this machine's (a world of one), under its
/// pool, with its addresses and slots; <see cref="ClusterWorld.FindWorkersAsync"/> finds it.
/// </summary>
public sealed class WorkerHost : IAsyncDisposable
{
    /// <summary>The variable naming the pool a worker joins and a program looks in.</summary>
    public const string PoolVariable = "XCALL_WORKER_POOL";

    /// <summary>The variable listing the addresses of workers on other machines (comma-separated), which a program uses besides those it finds.</summary>
    public const string AddressesVariable = "XCALL_WORKERS";

    // Design: _free is the number of free slots; TryTakeSlot lowers it only from a positive value (a compare-and-swap
    // loop), ReturnSlot raises it, so it stays within 0..Slots whatever threads take and return slots.
    private readonly RemoteListener? _listener;
    private int _free;

    private WorkerHost(ClusterWorld world, string pool, int slots, RemoteListener? listener)
    {
        World = world;
        Pool = pool;
        Slots = slots;
        _free = slots;
        _listener = listener;
    }

    /// <summary>The world this host serves in; its <see cref="ClusterWorld.Server"/> holds the services.</summary>
    public ClusterWorld World { get; }

    /// <summary>The services callers use: add the program's before the host is announced (see <see cref="IWorkerSetup"/>).</summary>
    public XCallServer Services => World.Server;

    /// <summary>The pool this worker belongs to.</summary>
    public string Pool { get; }

    /// <summary>How many processes it runs at once.</summary>
    public int Slots { get; }

    /// <summary>How many slots are free now.</summary>
    public int FreeSlots => Volatile.Read(ref _free);

    /// <summary>The name it is announced under (<see cref="WorkerInfo.Name"/>).</summary>
    public string Name => World.WorkerName();

    /// <summary>The TCP address of <see cref="WorkerHostOptions.Listen"/>, or null.</summary>
    public string? ListenAddress => _listener?.TcpAddress?.ToString();

    /// <summary>The pool <paramref name="pool"/> names, or the default one (<see cref="PoolVariable"/>, else <c>default</c>).</summary>
    public static string PoolOf(string? pool)
    {
        pool ??= Environment.GetEnvironmentVariable(PoolVariable);
        return string.IsNullOrEmpty(pool) ? "default" : pool;
    }

    /// <summary>
    /// Serves as a worker in <paramref name="world"/>: runs <paramref name="configure"/> (which adds the program's
    /// services), then announces the host, so a program that finds it finds its services too.
    /// </summary>
    /// <exception cref="InvalidOperationException">This process already serves as a worker of the pool.</exception>
    public static async Task<WorkerHost> StartAsync(ClusterWorld world, WorkerHostOptions? options = null,
        Func<WorkerHost, CancellationToken, Task>? configure = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(world);
        options ??= WorkerHostOptions.Default;
        ArgumentOutOfRangeException.ThrowIfLessThan(options.Slots, 1, nameof(options));
        string pool = PoolOf(options.Pool);
        ArgumentException.ThrowIfNullOrEmpty(pool);
        RemoteListener? listener = options.Listen is { } listen ? Remote.Serve(listen, world.Server) : null;
        var host = new WorkerHost(world, pool, options.Slots, listener);
        try
        {
            if (configure is not null)
            {
                await configure(host, cancellationToken).ConfigureAwait(false);
            }
            await world.Names.RegisterAsync(ClusterWorld.WorkerEntry(pool, host.Name), world.WorkerCard(options.Slots), cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            listener?.Dispose();
            throw;
        }
        return host;
    }

    /// <summary>Takes a free slot; false when every slot is taken.</summary>
    public bool TryTakeSlot()
    {
        int free = Volatile.Read(ref _free);
        while (free > 0)
        {
            int seen = Interlocked.CompareExchange(ref _free, free - 1, free);
            if (seen == free)
            {
                return true;
            }
            free = seen;
        }
        return false;
    }

    /// <summary>Gives back a slot <see cref="TryTakeSlot"/> took.</summary>
    /// <exception cref="InvalidOperationException">No slot was taken.</exception>
    public void ReturnSlot()
    {
        if (Interlocked.Increment(ref _free) > Slots)
        {
            Interlocked.Decrement(ref _free);
            throw new InvalidOperationException("A slot was returned that was never taken.");
        }
    }

    /// <summary>Stops serving <see cref="WorkerHostOptions.Listen"/>; the world's addresses and the announcement go when the world is left.</summary>
    public ValueTask DisposeAsync()
    {
        _listener?.Dispose();
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"worker {Name} of pool {Pool} ({FreeSlots}/{Slots} slots free)");
}
