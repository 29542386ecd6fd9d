using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using XCall.Cluster;
using XCall.Parallel.Host;

namespace XCall.Parallel;

/// <summary>
/// Parallel objects placed on worker hosts: <c>xcall worker</c> processes (and ranks serving as workers) of a pool,
/// the hosts <c>DistParallel</c> uses too. A program's <see cref="IWorkerSetup"/> offers its
/// <see cref="ParallelTypes"/> there with <see cref="Serve"/>; a caller connects to the pool and creates objects on
/// the least loaded worker. Calls go as with <see cref="ParallelWorld"/>: one-way calls aggregated into batches, a
/// call that expects a reply first sends them and sees their effects, calls of one caller to one object in order.
/// When a worker dies, every call on its objects fails with an <see cref="XCallDisconnectedException"/> naming the
/// worker, whose inner exception is a <see cref="WorkerFailedException"/>.
/// </summary>
/// <remarks>
/// A rank of a <see cref="ParallelWorld"/> hosts objects for that world already; <see cref="Serve"/> is for hosts
/// that are not ranks of one. References to these objects are not <see cref="ParallelRef"/>s: they are called from
/// the process that created them.
/// </remarks>
public sealed class WorkerObjects : IAsyncDisposable
{
    // Design: _lock guards _tunnels (one per worker, made once) and _where. Each tunnel's connection closing
    // (the worker died) closes its batch channel over a disconnection that names the worker, so calls in flight and
    // later ones fail with it. _client is this caller's id on every worker: the hosts order batches per client id.
    private readonly object _lock = new();
    private readonly ParallelTypes _types;
    private readonly AggregationOptions _aggregation;
    private readonly ParallelMeasurements _measurements = new();
    private readonly Dictionary<string, Task<WorkerTunnel>> _tunnels = [];
    private readonly ConditionalWeakTable<object, WorkerInfo> _where = [];
    private readonly int _client = RandomNumberGenerator.GetInt32(int.MaxValue);
    private long _placed;

    /// <summary>Places objects of <paramref name="types"/> on <paramref name="workers"/>, aggregating one-way calls by <paramref name="aggregation"/> (default <see cref="AggregationOptions.Default"/>).</summary>
    public WorkerObjects(ParallelTypes types, IReadOnlyList<WorkerInfo> workers, AggregationOptions? aggregation = null)
    {
        ArgumentNullException.ThrowIfNull(types);
        ArgumentNullException.ThrowIfNull(workers);
        _types = types;
        Workers = workers;
        _aggregation = aggregation ?? AggregationOptions.Default;
    }

    /// <summary>The workers objects are placed on.</summary>
    public IReadOnlyList<WorkerInfo> Workers { get; }

    /// <summary>Raised, on a thread of the tunnel, for each one-way call that threw on its worker; keep handlers short.</summary>
    public event Action<WorkerObjects, OneWayCallFailedException>? OneWayCallFailed;

    /// <summary>
    /// Offers <paramref name="types"/> on <paramref name="host"/>: callers create objects of them there. Call it from
    /// the program's <see cref="IWorkerSetup"/>.
    /// </summary>
    public static void Serve(WorkerHost host, ParallelTypes types)
    {
        ArgumentNullException.ThrowIfNull(host);
        ArgumentNullException.ThrowIfNull(types);
        host.Services.Add<IParallelHost>(new ParallelHost(host.World.Rank, types));
    }

    /// <summary>The workers of <paramref name="pool"/> that <paramref name="world"/> finds now (<see cref="ClusterWorld.FindWorkersAsync"/>), to place objects on.</summary>
    public static async Task<WorkerObjects> ConnectAsync(ClusterWorld world, ParallelTypes types, string? pool = null,
        AggregationOptions? aggregation = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(world);
        IReadOnlyList<WorkerInfo> workers = await world.FindWorkersAsync(pool, cancellationToken).ConfigureAwait(false);
        return new WorkerObjects(types, workers, aggregation);
    }

    /// <summary>
    /// Creates an object of contract <typeparamref name="T"/> on the worker hosting the fewest objects now (counted
    /// afresh at each creation; ties go round robin).
    /// </summary>
    /// <exception cref="InvalidOperationException">There are no workers, or <typeparamref name="T"/> is not one of the types.</exception>
    /// <exception cref="WorkerFailedException">The worker picked did not answer.</exception>
    public async Task<T> CreateAsync<T>(CancellationToken cancellationToken = default) where T : class
    {
        if (Workers.Count == 0)
        {
            throw new InvalidOperationException("No worker to place the object on: start xcall worker processes of the pool, or ranks serving as workers.");
        }
        long sequence = Interlocked.Increment(ref _placed) - 1;
        int[] loads = await Task.WhenAll(Workers.Select(w => LoadOfAsync(w, cancellationToken))).ConfigureAwait(false);
        int least = loads.Min();
        for (int step = 0; ; step++)
        {
            int i = (int)((sequence + step) % Workers.Count);
            if (loads[i] == least)
            {
                return await CreateOnAsync<T>(Workers[i], cancellationToken).ConfigureAwait(false);
            }
        }
    }

    /// <summary>Creates an object of contract <typeparamref name="T"/> on <paramref name="worker"/>.</summary>
    /// <exception cref="InvalidOperationException"><typeparamref name="T"/> is not one of the types.</exception>
    /// <exception cref="WorkerFailedException">The worker did not answer.</exception>
    public async Task<T> CreateOnAsync<T>(WorkerInfo worker, CancellationToken cancellationToken = default) where T : class
    {
        ArgumentNullException.ThrowIfNull(worker);
        ParallelType type = _types.Get<T>();
        WorkerTunnel tunnel = await OpenAsync(worker, cancellationToken).ConfigureAwait(false);
        ulong id;
        try
        {
            id = tunnel.Host.Create(type.Contract, type.Hash);
        }
        catch (XCallDisconnectedException e)
        {
            throw new WorkerFailedException(worker.Name, $"it did not answer the creation of a {type.Contract} ({e.Reason})", e);
        }
        T proxy = tunnel.Tunnel.Connection.GetProxy<T>(id);
        _where.AddOrUpdate(proxy, worker);
        return proxy;
    }

    /// <summary>The worker <paramref name="parallelObject"/> (created here) lives on.</summary>
    /// <exception cref="ArgumentException">The object was not created by these worker objects.</exception>
    public WorkerInfo WorkerOf(object parallelObject)
    {
        ArgumentNullException.ThrowIfNull(parallelObject);
        return _where.TryGetValue(parallelObject, out WorkerInfo? worker)
            ? worker
            : throw new ArgumentException("The object was not created by these worker objects.", nameof(parallelObject));
    }

    /// <summary>Sends the one-way calls held for the worker of <paramref name="parallelObject"/> and waits until it ran them.</summary>
    /// <exception cref="XCallDisconnectedException">The worker failed.</exception>
    public void Flush(object parallelObject) => OpenAsync(WorkerOf(parallelObject), CancellationToken.None).GetAwaiter().GetResult().Tunnel.Channel.Flush();

    /// <summary>Sends every held one-way call, waits until it ran, and closes the connections to the workers.</summary>
    public ValueTask DisposeAsync()
    {
        Task<WorkerTunnel>[] tunnels;
        lock (_lock)
        {
            tunnels = [.. _tunnels.Values];
            _tunnels.Clear();
        }
        foreach (Task<WorkerTunnel> open in tunnels)
        {
            if (open.IsCompletedSuccessfully)
            {
                try
                {
                    open.Result.Tunnel.Channel.Flush();
                }
                catch (XCallException)
                {
                    // Its worker failed; the calls held for it are lost with it.
                }
                open.Result.Dispose();
            }
        }
        return ValueTask.CompletedTask;
    }

    private async Task<int> LoadOfAsync(WorkerInfo worker, CancellationToken cancellationToken)
    {
        WorkerTunnel tunnel = await OpenAsync(worker, cancellationToken).ConfigureAwait(false);
        try
        {
            return tunnel.Host.Load();
        }
        catch (XCallDisconnectedException e)
        {
            throw new WorkerFailedException(worker.Name, $"it did not tell its load ({e.Reason})", e);
        }
    }

    private Task<WorkerTunnel> OpenAsync(WorkerInfo worker, CancellationToken cancellationToken)
    {
        lock (_lock)
        {
            if (!_tunnels.TryGetValue(worker.Name, out Task<WorkerTunnel>? open) || open.IsFaulted || open.IsCanceled)
            {
                open = MakeTunnelAsync(worker);
                _tunnels[worker.Name] = open;
            }
            return open.WaitAsync(cancellationToken);
        }
    }

    private async Task<WorkerTunnel> MakeTunnelAsync(WorkerInfo worker)
    {
        RemoteService<IParallelHost> service;
        try
        {
            service = await Remote.OpenAsync<IParallelHost>(worker.Address, RemoteOptions.Default with { Reconnect = false }).ConfigureAwait(false);
        }
        catch (XCallDisconnectedException e)
        {
            throw new WorkerFailedException(worker.Name, $"nothing answers at its address {worker.Address} ({e.Reason})", e);
        }
        IParallelHost host = service.Proxy;
        int client = _client;
        string endpoint = $"parallel://{worker.Name}";
        var channel = new BatchChannel(endpoint, $"worker {worker.Name}", async (sequence, frames) =>
        {
            try
            {
                return await host.ExchangeAsync(client, sequence, frames).ConfigureAwait(false);
            }
            catch (XCallDisconnectedException e)
            {
                throw Lost(worker, endpoint, e);
            }
        }, _aggregation, _measurements, failure => OneWayCallFailed?.Invoke(this, failure));
        var tunnel = new WorkerTunnel(service, new Tunnel(channel));
        Runtime.XCallConnection connection = service.Connection!;
        connection.Closed += (_, error) => channel.Close(Lost(worker, endpoint, error));
        if (connection.IsClosed)
        {
            channel.Close(Lost(worker, endpoint, null));
        }
        return tunnel;
    }

    /// <summary>The failure calls on <paramref name="worker"/>'s objects see: a disconnection naming the worker, over a <see cref="WorkerFailedException"/>.</summary>
    private static XCallDisconnectedException Lost(WorkerInfo worker, string endpoint, Exception? error)
    {
        string why = error is XCallDisconnectedException lost ? lost.Reason : error?.Message ?? "its connection closed";
        var failed = new WorkerFailedException(worker.Name, $"its connection at {worker.Address} closed ({why})", error);
        return new XCallDisconnectedException(endpoint, $"worker {worker.Name}, which hosts the object, failed ({why})", failed);
    }

    /// <summary>The connection to one worker's host and the batching tunnel its objects are called through.</summary>
    private sealed record WorkerTunnel(RemoteService<IParallelHost> Service, Tunnel Tunnel) : IDisposable
    {
        public IParallelHost Host => Service.Proxy;

        public void Dispose()
        {
            Tunnel.Dispose();
            Service.Dispose();
        }
    }
}
