using XCall.Cluster;

namespace XCall.Channels.Distributed;

/// <summary>
/// Runs processes in parallel as <see cref="Parallel"/> does, on the free workers of the world where it can
/// (CSP.NET's <c>DistParallel</c>): each process of the <see cref="ProcessKinds"/> goes to a worker host of the pool
/// with a free slot (ranks serving as workers, <c>xcall worker</c> processes, <c>XCALL_WORKERS</c>), taken in turn;
/// when none is free, and for every other process, it runs here. <see cref="RunAsync"/> returns when every
/// process ran. Unlike <see cref="Parallel"/>, a failure does not cancel the others (they may be on machines that
/// are fine): each process runs to its end, then every failure is thrown together; a worker that dies fails
/// exactly the processes it ran, each with a <see cref="WorkerFailedException"/>.
/// </summary>
/// <remarks>In stand-alone mode (<see cref="CspWorld.IsStandAlone"/>) there are no workers: every process runs here.</remarks>
public sealed class DistParallel : IProcess
{
    /// <summary>What <see cref="Placements"/> says of a process that ran in this process.</summary>
    public const string Local = "local";

    private readonly CspWorld _world;
    private readonly ProcessKinds _kinds;
    private readonly List<IProcess> _processes;
    private string[] _placements = [];

    /// <summary>Creates a DistParallel of <paramref name="processes"/>; those of <paramref name="kinds"/> may run on workers of <paramref name="world"/>.</summary>
    public DistParallel(CspWorld world, ProcessKinds kinds, params IEnumerable<IProcess> processes)
    {
        ArgumentNullException.ThrowIfNull(world);
        ArgumentNullException.ThrowIfNull(kinds);
        _world = world;
        _kinds = kinds;
        _processes = [.. processes];
    }

    /// <summary>The worker pool to use; null takes <see cref="WorkerHost.PoolVariable"/>, else <c>default</c>.</summary>
    public string? Pool { get; init; }

    /// <summary>
    /// The workers to use instead of those the world finds, such as workers on other machines named by their
    /// <c>tcp://</c> addresses (see <see cref="WorkerHostOptions.Listen"/>); null finds them (<see cref="ClusterWorld.FindWorkersAsync"/>).
    /// </summary>
    public IReadOnlyList<WorkerInfo>? Workers { get; init; }

    /// <summary>After <see cref="RunAsync"/>: where each process ran, in the order given: a worker's <see cref="WorkerInfo.Name"/>, or <see cref="Local"/>.</summary>
    public IReadOnlyList<string> Placements => _placements;

    /// <summary>Adds a process before the DistParallel runs.</summary>
    public void Add(IProcess process) => _processes.Add(process);

    /// <summary>
    /// Offers this program's processes on <paramref name="host"/>: they run there with <paramref name="world"/> as
    /// their <see cref="CspWorld.Current"/>, one per slot. Call it from the program's <see cref="IWorkerSetup"/>.
    /// </summary>
    public static void Serve(WorkerHost host, CspWorld world, ProcessKinds kinds)
    {
        ArgumentNullException.ThrowIfNull(host);
        ArgumentNullException.ThrowIfNull(world);
        ArgumentNullException.ThrowIfNull(kinds);
        host.Services.Add<IProcessRunner>(new ProcessRunner(host, world, kinds));
    }

    /// <summary>Sends the processes to free workers, runs the rest here, and waits for all.</summary>
    /// <exception cref="AggregateException">One or more processes failed (a <see cref="WorkerFailedException"/> for each process of a worker that died); holds every failure.</exception>
    public async Task RunAsync(CancellationToken cancellationToken = default)
    {
        IReadOnlyList<WorkerInfo> found = Workers ?? (_world.World is { } cluster
            ? await cluster.FindWorkersAsync(Pool, cancellationToken).ConfigureAwait(false)
            : []);
        await using var workers = new WorkerConnections(found, _kinds.Program);
        var placements = new string[_processes.Count];
        var running = new Task[_processes.Count];
        for (int i = 0; i < running.Length; i++)
        {
            IProcess process = _processes[i];
            Reservation? slot = _kinds.Ships(process) ? await workers.ReserveAsync(cancellationToken).ConfigureAwait(false) : null;
            if (slot is { } reserved)
            {
                placements[i] = reserved.Worker.Name;
                running[i] = RunThereAsync(reserved, process, cancellationToken);
            }
            else
            {
                placements[i] = Local;
                running[i] = RunHereAsync(process, cancellationToken);
            }
        }
        _placements = placements;
        Task all = Task.WhenAll(running);
        await all.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        if (all.IsFaulted)
        {
            throw new AggregateException("One or more processes failed.", all.Exception!.InnerExceptions);
        }
        cancellationToken.ThrowIfCancellationRequested();
    }

    /// <summary>Blocking form of <see cref="RunAsync"/>.</summary>
    public void Run() => RunAsync().GetAwaiter().GetResult();

    private Task RunHereAsync(IProcess process, CancellationToken cancellationToken) =>
        // PreferFairness: processes start in the order given, and one that computes before its first await holds up no other.
        Task.Factory.StartNew(() => CspWorld.RunInAsync(_world, process, cancellationToken), CancellationToken.None,
            TaskCreationOptions.PreferFairness | TaskCreationOptions.DenyChildAttach, TaskScheduler.Default).Unwrap();

    private async Task RunThereAsync(Reservation slot, IProcess process, CancellationToken cancellationToken)
    {
        byte[] bytes;
        try
        {
            bytes = _kinds.Write(process);
        }
        catch
        {
            slot.Runner.Release(slot.Lease);
            throw;
        }
        try
        {
            await slot.Runner.RunAsync(slot.Lease, bytes, cancellationToken).ConfigureAwait(false);
        }
        catch (XCallDisconnectedException e)
        {
            throw new WorkerFailedException(slot.Worker.Name,
                $"its connection at {slot.Worker.Address} closed while it ran a {process.GetType().Name} ({e.Reason})", e);
        }
    }

    /// <summary>A slot of a worker, reserved for one process.</summary>
    private readonly record struct Reservation(WorkerInfo Worker, IProcessRunner Runner, long Lease);

    /// <summary>The connections to the workers found, opened on first use, and the turn among them.</summary>
    private sealed class WorkerConnections(IReadOnlyList<WorkerInfo> workers, string program) : IAsyncDisposable
    {
        // Design: used by RunAsync's one thread while it places processes; a worker that refused (full, another
        // program) or cannot be reached is not asked again in this run, so the processes left run here at once.
        private readonly RemoteService<IProcessRunner>?[] _open = new RemoteService<IProcessRunner>?[workers.Count];
        private readonly bool[] _done = new bool[workers.Count];
        private int _turn;

        public async Task<Reservation?> ReserveAsync(CancellationToken cancellationToken)
        {
            for (int step = 0; step < workers.Count; step++)
            {
                int i = (_turn + step) % workers.Count;
                if (_done[i])
                {
                    continue;
                }
                long lease;
                try
                {
                    _open[i] ??= await Remote.OpenAsync<IProcessRunner>(workers[i].Address, RemoteOptions.Default with { Reconnect = false }, cancellationToken).ConfigureAwait(false);
                    lease = await _open[i]!.Proxy.ReserveAsync(program).ConfigureAwait(false);
                }
                catch (Exception e) when (e is XCallException or System.Net.Sockets.SocketException or IOException)
                {
                    lease = 0; // gone since it was announced, or it serves no processes: use the others
                }
                if (lease > 0)
                {
                    _turn = i + 1;
                    return new Reservation(workers[i], _open[i]!.Proxy, lease);
                }
                _done[i] = true;
            }
            return null;
        }

        public ValueTask DisposeAsync()
        {
            foreach (RemoteService<IProcessRunner>? open in _open)
            {
                open?.Dispose();
            }
            return ValueTask.CompletedTask;
        }
    }
}
