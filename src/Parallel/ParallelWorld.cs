using System.Diagnostics;
using System.Runtime.CompilerServices;
using XCall.Cluster;
using XCall.Parallel.Host;
using XCall.Runtime;

namespace XCall.Parallel;

/// <summary>
/// The object manager of one rank of a <see cref="ClusterWorld"/>: it creates parallel objects where the placement
/// policy says (this process, another rank on this node over shared memory, another node over TCP), or in the
/// caller's process when their grain is too fine (agglomeration); it hosts the objects other ranks place here.
/// Calls to an object on another rank go through a tunnel per rank: <see cref="OneWayAttribute">one-way</see> calls
/// are aggregated into batches, a call that expects a reply first sends them and sees their effects, and the
/// calls of one caller reach one object in the order they were made.
/// </summary>
public sealed class ParallelWorld : IAsyncDisposable
{
    // Design: _lock guards _tunnels, _proxies and _placed. A tunnel is made once per rank and kept for the life of
    // the world; proxies are cached weakly per reference while alive, and _refs maps each to its reference, so
    // RefOf finds every object this world handed out. With ReleaseWhenCollected each proxy's entry in _refs is a
    // Lease whose finalizer (run once the proxy was collected) sends the calls held for its rank and drops the
    // proxy's hold on the object: its rank releases it when the last holder dropped.
    private readonly object _lock = new();
    private readonly ParallelTypes _types;
    private readonly ParallelWorldOptions _options;
    private readonly ParallelHost _host;
    private readonly ParallelMeasurements _measurements = new();
    private readonly Dictionary<int, Task<Tunnel>> _tunnels = [];
    private readonly Dictionary<ParallelRef, WeakReference<object>> _proxies = [];
    private readonly ConditionalWeakTable<object, StrongBox<ParallelRef>> _refs = [];
    private long _placed;
    private volatile bool _left;

    private ParallelWorld(ClusterWorld cluster, ParallelTypes types, ParallelWorldOptions options, ParallelHost host)
    {
        Cluster = cluster;
        _types = types;
        _options = options;
        _host = host;
        cluster.RankFailed += OnRankFailed;
    }

    /// <summary>The cluster world underneath: rank, size, names, failures.</summary>
    public ClusterWorld Cluster { get; }

    /// <summary>This process's rank.</summary>
    public int Rank => Cluster.Rank;

    /// <summary>How many ranks the world has.</summary>
    public int Size => Cluster.Size;

    /// <summary>Raised, on a thread of the world, for each one-way call that threw on its host; keep handlers short.</summary>
    public event Action<ParallelWorld, OneWayCallFailedException>? OneWayCallFailed;

    /// <summary>
    /// Joins the cluster world (<see cref="ClusterWorld.JoinAsync"/>) with this rank's object host added to its
    /// services, and measures what a call costs here (for <see cref="Agglomeration.Adaptive"/>). Every rank joins
    /// with the same <paramref name="types"/>.
    /// </summary>
    /// <exception cref="TimeoutException">The cluster world did not form in time.</exception>
    /// <exception cref="RankFailedException">A rank failed while the world was joining.</exception>
    public static async Task<ParallelWorld> JoinAsync(ParallelTypes types, ParallelWorldOptions? options = null, ClusterOptions? cluster = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(types);
        options ??= ParallelWorldOptions.Default;
        cluster ??= ClusterOptions.Default;
        XCallServer services = cluster.Services ?? new XCallServer();
        var host = new DeferredHost();
        services.Add<IParallelHost>(host);
        ClusterWorld world = await ClusterWorld.JoinAsync(cluster with { Services = services }, cancellationToken).ConfigureAwait(false);
        var parallel = new ParallelWorld(world, types, options, host.Bind(new ParallelHost(world.Rank, types)));
        parallel.Calibrate();
        return parallel;
    }

    /// <summary>
    /// Creates an object of contract <typeparamref name="T"/>: in this process when the type is agglomerated (always,
    /// or by its measured grain), else on the rank the placement policy picks. <paramref name="key"/> is for
    /// <see cref="PlacementPolicy.ByKey"/>.
    /// </summary>
    /// <exception cref="InvalidOperationException"><typeparamref name="T"/> is not one of the world's types.</exception>
    /// <exception cref="RankFailedException">The rank picked failed.</exception>
    public async Task<T> CreateAsync<T>(string? key = null, CancellationToken cancellationToken = default) where T : class
    {
        ParallelType type = _types.Get<T>();
        long sequence = Interlocked.Increment(ref _placed) - 1;
        if (ShouldAgglomerate(type))
        {
            return (T)Local(type.Create());
        }
        var context = new PlacementContext(Rank, Size, sequence, type.Contract, key, GetLoadsAsync);
        int rank = await _options.Placement.PlaceAsync(context, cancellationToken).ConfigureAwait(false);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)rank, (uint)Size, "placement");
        if (rank == Rank)
        {
            return (T)Local(type.Create());
        }
        IParallelHost host = await Cluster.OpenAsync<IParallelHost>(rank, cancellationToken).ConfigureAwait(false);
        ulong id;
        try
        {
            id = host.Create(type.Contract, type.Hash);
        }
        catch (XCallDisconnectedException e)
        {
            Cluster.ThrowIfFailed(rank);
            throw new RankFailedException(rank, $"it did not answer the creation of a {type.Contract} ({e.Reason})", e);
        }
        return await AttachCoreAsync<T>(new ParallelRef(rank, id), created: true, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Creates an object as <see cref="CreateAsync{T}"/> does, blocking: for one-way methods of parallel objects, which create others.</summary>
    public T Create<T>(string? key = null) where T : class => CreateAsync<T>(key).GetAwaiter().GetResult();

    /// <summary>
    /// The object <paramref name="reference"/> names, callable from this rank: the object itself when it lives in this
    /// process. With <see cref="ParallelWorldOptions.ReleaseWhenCollected"/> the proxy holds the object on its rank
    /// until it is collected.
    /// </summary>
    /// <exception cref="XCallException">The rank hosts no object of that id (it was released).</exception>
    public Task<T> AttachAsync<T>(ParallelRef reference, CancellationToken cancellationToken = default) where T : class =>
        AttachCoreAsync<T>(reference, created: false, cancellationToken);

    private async Task<T> AttachCoreAsync<T>(ParallelRef reference, bool created, CancellationToken cancellationToken) where T : class
    {
        if (reference.Rank == Rank)
        {
            return (T)(_host.Find(reference.ObjectId)?.Target ?? throw new XCallException($"Rank {Rank} hosts no parallel object with id {reference.ObjectId}."));
        }
        if (FindProxy(reference) is { } known)
        {
            return (T)known;
        }
        Tunnel tunnel = await OpenTunnelAsync(reference.Rank, cancellationToken).ConfigureAwait(false);
        bool hold = _options.ReleaseWhenCollected;
        if (hold && !created)
        {
            // Counted before the proxy exists: its lease drops what this added.
            IParallelHost host = await Cluster.OpenAsync<IParallelHost>(reference.Rank, cancellationToken).ConfigureAwait(false);
            if (!host.Hold(reference.ObjectId))
            {
                throw new XCallException($"Rank {reference.Rank} hosts no parallel object with id {reference.ObjectId} (it was released).");
            }
        }
        T proxy = tunnel.Connection.GetProxy<T>(reference.ObjectId);
        lock (_lock)
        {
            _proxies[reference] = new WeakReference<object>(proxy);
            _refs.AddOrUpdate(proxy, hold ? new Lease(reference, this) : new StrongBox<ParallelRef>(reference));
        }
        return proxy;
    }

    private object? FindProxy(ParallelRef reference)
    {
        lock (_lock)
        {
            return _proxies.TryGetValue(reference, out WeakReference<object>? known) && known.TryGetTarget(out object? proxy) ? proxy : null;
        }
    }

    /// <summary>Blocking <see cref="AttachAsync{T}"/>.</summary>
    public T Attach<T>(ParallelRef reference) where T : class => AttachAsync<T>(reference).GetAwaiter().GetResult();

    /// <summary>Where <paramref name="parallelObject"/> (made or attached by this world) lives, to pass to other ranks.</summary>
    /// <exception cref="ArgumentException">The object did not come from this world.</exception>
    public ParallelRef RefOf(object parallelObject)
    {
        ArgumentNullException.ThrowIfNull(parallelObject);
        return _refs.TryGetValue(parallelObject, out StrongBox<ParallelRef>? box)
            ? box.Value
            : throw new ArgumentException("The object was not created or attached by this parallel world.", nameof(parallelObject));
    }

    /// <summary>True when <paramref name="parallelObject"/> lives in this process (its calls are direct).</summary>
    public bool IsLocal(object parallelObject) => RefOf(parallelObject).Rank == Rank;

    /// <summary>
    /// Sends the one-way calls held for the rank of <paramref name="parallelObject"/> and waits until that rank ran
    /// them (nothing to do for a local object).
    /// </summary>
    /// <exception cref="XCallDisconnectedException">The object's rank failed.</exception>
    public void Flush(object parallelObject)
    {
        ParallelRef reference = RefOf(parallelObject);
        if (reference.Rank != Rank)
        {
            OpenTunnelAsync(reference.Rank, CancellationToken.None).GetAwaiter().GetResult().Channel.Flush();
        }
    }

    /// <summary>
    /// Releases <paramref name="parallelObject"/> (made or attached by this world): the one-way calls this rank made
    /// to it are sent and run first, then its rank drops it. Later calls to it, from any rank, throw
    /// <see cref="ObjectDisposedException"/> on its rank (a one-way call reports it as a one-way failure).
    /// Returns false when its rank had released it already.
    /// </summary>
    /// <exception cref="ArgumentException">The object did not come from this world.</exception>
    /// <exception cref="XCallDisconnectedException">The object's rank failed.</exception>
    public async Task<bool> ReleaseAsync(object parallelObject, CancellationToken cancellationToken = default)
    {
        ParallelRef reference = RefOf(parallelObject);
        if (reference.Rank == Rank)
        {
            return _host.Release(reference.ObjectId);
        }
        Flush(parallelObject);
        IParallelHost host = await Cluster.OpenAsync<IParallelHost>(reference.Rank, cancellationToken).ConfigureAwait(false);
        bool released = host.Release(reference.ObjectId);
        lock (_lock)
        {
            _proxies.Remove(reference);
        }
        return released;
    }

    /// <summary>What was measured of contract <typeparamref name="T"/>'s calls (see <see cref="Agglomeration.Adaptive"/>).</summary>
    public GrainMeasurement Measure<T>() where T : class => _measurements.Measure(_types.Get<T>().Contract);

    /// <summary>Sends every held one-way call, waits until it ran, then leaves the cluster world (which waits for the other ranks).</summary>
    public async ValueTask DisposeAsync()
    {
        _left = true;
        Task<Tunnel>[] tunnels;
        lock (_lock)
        {
            tunnels = [.. _tunnels.Values];
        }
        foreach (Task<Tunnel> open in tunnels)
        {
            if (open.IsCompletedSuccessfully)
            {
                try
                {
                    open.Result.Channel.Flush();
                }
                catch (XCallException)
                {
                    // Its rank failed; the calls held for it are lost with it.
                }
            }
        }
        await Cluster.DisposeAsync().ConfigureAwait(false);
        foreach (Task<Tunnel> open in tunnels)
        {
            if (open.IsCompletedSuccessfully)
            {
                open.Result.Dispose();
            }
        }
        _host.Close();
    }

    private object Local(object target)
    {
        ulong id = _host.Add(target);
        _refs.AddOrUpdate(target, new StrongBox<ParallelRef>(new ParallelRef(Rank, id)));
        return target;
    }

    private bool ShouldAgglomerate(ParallelType type)
    {
        switch (type.Agglomeration)
        {
            case Agglomeration.Always:
                return true;
            case Agglomeration.Never:
                return false;
            default:
                GrainMeasurement measured = _measurements.Measure(type.Contract);
                if (measured.Calls >= _options.MinMeasuredCalls)
                {
                    return measured.GrainNanoseconds < _options.GrainFactor * measured.OverheadNanoseconds;
                }
                if (type.Probe is null || Size == 1)
                {
                    return false;
                }
                double probed = measured.ProbeNanoseconds ?? _measurements.AddProbe(type.Contract, TimeProbe(type));
                return probed < _options.GrainFactor * measured.OverheadNanoseconds;
        }
    }

    /// <summary>
    /// The mean time of the call a type's grain probe returns, run directly on an object made for the probe alone:
    /// the least mean of up to 20 rounds, each doubling its calls between two clock reads until it took 0.2 ms or made
    /// 16,384 calls, so the clock adds little to a fine call; short rounds, so that one round in which the thread was
    /// preempted does not decide; rounds stop after 5 ms (at least 3), so a coarse call runs only a few times.
    /// </summary>
    private static double TimeProbe(ParallelType type)
    {
        Action call = type.Probe!(type.Create());
        call();
        long budget = Stopwatch.Frequency / 5000;
        long first = Stopwatch.GetTimestamp();
        double best = double.MaxValue;
        for (int round = 0; round < 20 && (round < 3 || Stopwatch.GetElapsedTime(first).TotalMilliseconds < 5); round++)
        {
            long start = Stopwatch.GetTimestamp();
            long now;
            int calls = 0;
            int block = 1;
            do
            {
                for (int i = 0; i < block; i++)
                {
                    call();
                }
                calls += block;
                block *= 2;
                now = Stopwatch.GetTimestamp();
            }
            while (now - start < budget && calls < 16_384);
            best = Math.Min(best, Stopwatch.GetElapsedTime(start, now).TotalNanoseconds / calls);
        }
        return best;
    }

    /// <summary>How many objects each rank hosts now, by rank.</summary>
    internal async Task<int[]> GetLoadsAsync(CancellationToken cancellationToken)
    {
        var loads = new Task<int>[Size];
        for (int rank = 0; rank < Size; rank++)
        {
            loads[rank] = rank == Rank ? Task.FromResult(_host.Load()) : LoadOfAsync(rank, cancellationToken);
        }
        return await Task.WhenAll(loads).ConfigureAwait(false);
    }

    private async Task<int> LoadOfAsync(int rank, CancellationToken cancellationToken)
    {
        IParallelHost host = await Cluster.OpenAsync<IParallelHost>(rank, cancellationToken).ConfigureAwait(false);
        return host.Load();
    }

    private Task<Tunnel> OpenTunnelAsync(int rank, CancellationToken cancellationToken)
    {
        lock (_lock)
        {
            if (!_tunnels.TryGetValue(rank, out Task<Tunnel>? open) || open.IsFaulted || open.IsCanceled)
            {
                open = MakeTunnelAsync(rank);
                _tunnels[rank] = open;
            }
            return open.WaitAsync(cancellationToken);
        }
    }

    private async Task<Tunnel> MakeTunnelAsync(int rank)
    {
        IParallelHost host = await Cluster.OpenAsync<IParallelHost>(rank).ConfigureAwait(false);
        int me = Rank;
        var channel = new BatchChannel($"parallel://rank{rank}", $"rank {rank}", (sequence, frames) => host.ExchangeAsync(me, sequence, frames),
            _options.Aggregation, _measurements, failure => OneWayCallFailed?.Invoke(this, failure));
        return new Tunnel(channel);
    }

    private void OnRankFailed(ClusterWorld cluster, RankFailedException failure)
    {
        Task<Tunnel>? open;
        lock (_lock)
        {
            _tunnels.TryGetValue(failure.Rank, out open);
        }
        if (open is { IsCompletedSuccessfully: true })
        {
            open.Result.Channel.Close(new XCallDisconnectedException($"parallel://rank{failure.Rank}",
                $"rank {failure.Rank}, which hosts the object, failed ({failure.Reason})", failure));
        }
    }

    /// <summary>
    /// Times aggregated one-way calls to an object of this process through a tunnel that runs its batches on the
    /// calling thread: the host's dispatch cost per call and the caller's, the two costs the grain is weighed against.
    /// </summary>
    private void Calibrate()
    {
        const int Calls = 20_000;
        var types = new ParallelTypes().Add<ICalibration>(() => new Calibration(), Agglomeration.Never);
        var host = new ParallelHost(Rank, types);
        var measurements = new ParallelMeasurements();
        var channel = new BatchChannel("parallel://calibration", "this rank", (sequence, frames) => host.ExchangeAsync(Rank, sequence, frames),
            _options.Aggregation with { MaxDelay = TimeSpan.Zero }, measurements, _ => { });
        using var tunnel = new Tunnel(channel);
        ICalibration target = tunnel.Connection.GetProxy<ICalibration>(host.Add(new Calibration()));
        string contract = ContractRegistry.Get<ICalibration>().Name;
        double dispatch = double.MaxValue;
        double caller = double.MaxValue;
        long hostCalls = 0;
        double hostNanoseconds = 0;
        for (int round = 0; round < 3; round++)
        {
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < Calls; i++)
            {
                target.Tick(i);
            }
            _ = target.Sum();
            double elapsed = Stopwatch.GetElapsedTime(start).TotalNanoseconds;
            GrainMeasurement total = measurements.Measure(contract);
            double roundHost = (total.HostNanoseconds * total.Calls) - hostNanoseconds;
            long roundCalls = total.Calls - hostCalls;
            hostCalls = total.Calls;
            hostNanoseconds = total.HostNanoseconds * total.Calls;
            dispatch = Math.Min(dispatch, roundHost / roundCalls);
            caller = Math.Min(caller, (elapsed - roundHost) / Calls);
        }
        _measurements.DispatchNanoseconds = dispatch;
        _measurements.CallerNanoseconds = Math.Max(caller, 1);
        host.Close();
    }

    /// <summary>Raised (tests) once the hold of a collected proxy was dropped on its object's rank.</summary>
    internal event Action<ParallelRef>? ProxyDropped;

    private void OnProxyCollected(ParallelRef reference)
    {
        if (!_left)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static state => _ = state.World.DropAsync(state.Reference), (World: this, Reference: reference), preferLocal: false);
        }
    }

    /// <summary>Sends the calls held for the rank of a collected proxy's object, waits until they ran, then drops the proxy's hold there.</summary>
    private async Task DropAsync(ParallelRef reference)
    {
        lock (_lock)
        {
            if (_proxies.TryGetValue(reference, out WeakReference<object>? known) && !known.TryGetTarget(out _))
            {
                _proxies.Remove(reference);
            }
        }
        try
        {
            (await OpenTunnelAsync(reference.Rank, CancellationToken.None).ConfigureAwait(false)).Channel.Flush();
            IParallelHost host = await Cluster.OpenAsync<IParallelHost>(reference.Rank).ConfigureAwait(false);
            host.Drop(reference.ObjectId);
        }
        catch (Exception e) when (e is XCallException or ObjectDisposedException or InvalidOperationException)
        {
            // The rank failed or the world was left: the object went with it.
            return;
        }
        ProxyDropped?.Invoke(reference);
    }

    /// <summary>A proxy's reference; once the proxy was collected (this box with it), its finalizer drops the proxy's hold on the object.</summary>
    private sealed class Lease(ParallelRef reference, ParallelWorld world) : StrongBox<ParallelRef>(reference)
    {
        ~Lease() => world.OnProxyCollected(Value);
    }

    /// <summary>The host object the cluster serves from the moment it joins; bound to the rank's host once the rank is known.</summary>
    private sealed class DeferredHost : IParallelHost
    {
        private readonly TaskCompletionSource<ParallelHost> _host = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public ParallelHost Bind(ParallelHost host)
        {
            _host.SetResult(host);
            return host;
        }

        public ulong Create(string contract, ulong hash) => _host.Task.GetAwaiter().GetResult().Create(contract, hash);

        public int Load() => _host.Task.GetAwaiter().GetResult().Load();

        public bool Release(ulong objectId) => _host.Task.GetAwaiter().GetResult().Release(objectId);

        public bool Hold(ulong objectId) => _host.Task.GetAwaiter().GetResult().Hold(objectId);

        public void Drop(ulong objectId) => _host.Task.GetAwaiter().GetResult().Drop(objectId);

        public async Task<BatchResult> ExchangeAsync(int clientRank, long sequence, byte[] frames) =>
            await (await _host.Task.ConfigureAwait(false)).ExchangeAsync(clientRank, sequence, frames).ConfigureAwait(false);
    }
}
