using System.Runtime.CompilerServices;
using XCall.Cluster;
using Xunit.Abstractions;

namespace XCall.Parallel.Tests;

/// <summary>Worlds whose ranks are <see cref="ParallelWorld"/>s of this process, joined through a real store, calling each other over shared memory.</summary>
public sealed class ParallelWorldTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(30);
    private static readonly object s_madeLock = new();

    private static ParallelTypes Types(int rank, Agglomeration recorder = Agglomeration.Never, Agglomeration coarse = Agglomeration.Adaptive) =>
        new ParallelTypes().Add<IRecorder>(() => new Recorder(rank), recorder).Add<ICoarse>(() => new Coarse(), coarse);

    private static async Task<ParallelWorld[]> JoinAsync(int size, Func<int, ParallelWorldOptions> options, Func<int, ParallelTypes>? types = null)
    {
        string job = $"p{Environment.ProcessId}-{Guid.NewGuid():N}"[..24];
        Task<ParallelWorld>[] joins = [.. Enumerable.Range(0, size).Select(rank => ParallelWorld.JoinAsync((types ?? (r => Types(r)))(rank), options(rank), new ClusterOptions
        {
            Environment = new WorldEnvironment
            {
                Launcher = Launcher.XCall, Rank = rank, Size = size, LocalRank = rank, Node = "node-a", OneNode = true, JobId = job, StoreAddress = $"shm://xcall-store-{job}",
            },
            JoinTimeout = s_hang,
        }))];
        return await Task.WhenAll(joins).WaitAsync(s_hang);
    }

    /// <summary>Runs <paramref name="body"/> on a joined world of <paramref name="size"/> ranks, then every rank leaves.</summary>
    private static async Task InWorldsAsync(Func<ParallelWorld[], Task> body, int size, ParallelWorldOptions? options = null, Func<int, ParallelTypes>? types = null) =>
        await InWorldsAsync(body, size, _ => options ?? ParallelWorldOptions.Default, types);

    private static async Task InWorldsAsync(Func<ParallelWorld[], Task> body, int size, Func<int, ParallelWorldOptions> options, Func<int, ParallelTypes>? types = null)
    {
        ParallelWorld[] worlds = await JoinAsync(size, options, types);
        try
        {
            await body(worlds);
        }
        finally
        {
            // Off this thread: a world that hangs (a deadlock) blocks in DisposeAsync, and the test must fail, not hang.
            await Task.Run(() => Task.WhenAll(worlds.Select(w => w.DisposeAsync().AsTask()))).WaitAsync(s_hang);
        }
    }

    [Fact]
    public async Task Round_robin_places_on_the_next_ranks_in_turn()
    {
        await InWorldsAsync(async worlds =>
        {
            int[] ranks = new int[6];
            for (int i = 0; i < ranks.Length; i++)
            {
                IRecorder recorder = await worlds[0].CreateAsync<IRecorder>();
                ranks[i] = recorder.HostRank();
                Assert.Equal(ranks[i], worlds[0].RefOf(recorder).Rank);
            }
            Assert.Equal([1, 2, 0, 1, 2, 0], ranks);
        }, 3);
    }

    [Fact]
    public async Task Least_loaded_fills_the_emptiest_ranks_and_never_piles_a_burst_on_one()
    {
        // Rank 2 places locally and starts with three objects; rank 0's burst of six must fill ranks 0 and 1 up to it.
        await InWorldsAsync(async worlds =>
        {
            for (int i = 0; i < 3; i++)
            {
                Assert.True(worlds[2].IsLocal(await worlds[2].CreateAsync<IRecorder>()));
            }
            var placed = new List<int>();
            for (int i = 0; i < 6; i++)
            {
                placed.Add(worlds[0].RefOf(await worlds[0].CreateAsync<IRecorder>()).Rank);
            }
            Assert.DoesNotContain(2, placed);
            int[] loads = await worlds[0].GetLoadsAsync(CancellationToken.None);
            Assert.Equal(new[] { 3, 3, 3 }, loads);
        }, 3, rank => new ParallelWorldOptions { Placement = rank == 2 ? PlacementPolicy.Local : PlacementPolicy.LeastLoaded });
    }

    [Fact]
    public async Task Local_placement_keeps_the_object_in_the_creators_process_with_direct_calls()
    {
        await InWorldsAsync(async worlds =>
        {
            IRecorder recorder = await worlds[1].CreateAsync<IRecorder>();
            Assert.IsType<Recorder>(recorder);
            Assert.True(worlds[1].IsLocal(recorder));
            Assert.Equal(1, recorder.HostRank());
        }, 2, new ParallelWorldOptions { Placement = PlacementPolicy.Local });
    }

    [Fact]
    public async Task By_key_places_one_key_on_one_rank_whoever_creates_it()
    {
        await InWorldsAsync(async worlds =>
        {
            var seen = new HashSet<int>();
            foreach (string key in new[] { "alpha", "beta", "gamma", "delta", "epsilon", "zeta" })
            {
                int[] hosts = new int[3];
                for (int creator = 0; creator < 3; creator++)
                {
                    hosts[creator] = (await worlds[creator].CreateAsync<IRecorder>(key)).HostRank();
                }
                Assert.All(hosts, h => Assert.Equal(hosts[0], h));
                seen.Add(hosts[0]);
            }
            Assert.True(seen.Count > 1, "six keys all hashed to one rank");
            await Assert.ThrowsAsync<ArgumentException>(() => worlds[0].CreateAsync<IRecorder>());
        }, 3, new ParallelWorldOptions { Placement = PlacementPolicy.ByKey });
    }

    [Fact]
    public async Task One_way_calls_reach_the_object_in_order_and_a_sync_call_sees_them_all()
    {
        await InWorldsAsync(async worlds =>
        {
            IRecorder recorder = await worlds[0].CreateAsync<IRecorder>();
            Assert.False(worlds[0].IsLocal(recorder));
            const int Calls = 100_000;
            for (int i = 0; i < Calls; i++)
            {
                recorder.Append(i);
            }
            Assert.Equal(Calls, recorder.Count()); // a sync call sees every earlier one-way call
            Assert.Equal(Enumerable.Range(0, Calls), recorder.Values());
        }, 2);
    }

    [Fact]
    public async Task Aggregation_sends_full_batches_then_the_rest_before_a_sync_call()
    {
        var options = new ParallelWorldOptions { Aggregation = new AggregationOptions { MaxCalls = 100, MaxDelay = TimeSpan.FromHours(1) } };
        await InWorldsAsync(async worlds =>
        {
            IRecorder recorder = await worlds[0].CreateAsync<IRecorder>();
            ParallelRef where = worlds[0].RefOf(recorder);
            var target = (Recorder)await worlds[1].AttachAsync<IRecorder>(where);
            for (int i = 0; i < 250; i++)
            {
                recorder.Append(i);
            }
            // Two full batches of 100 left; 50 calls are held until a sync call or a flush sends them.
            worlds[0].Flush(recorder);
            Assert.Equal(250, target.Count());
            for (int i = 0; i < 30; i++)
            {
                recorder.Append(i);
            }
            Assert.Equal(280, recorder.Count());
        }, 2, options);
    }

    [Fact]
    public async Task A_lone_one_way_call_leaves_within_the_aggregation_delay()
    {
        var options = new ParallelWorldOptions { Aggregation = new AggregationOptions { MaxDelay = TimeSpan.FromMilliseconds(5) } };
        await InWorldsAsync(async worlds =>
        {
            IRecorder recorder = await worlds[0].CreateAsync<IRecorder>();
            var target = (SignallingRecorder)await worlds[1].AttachAsync<IRecorder>(worlds[0].RefOf(recorder));
            recorder.Append(7);
            Assert.Equal(7, await target.First.Task.WaitAsync(s_hang)); // no sync call, no flush: the timer sent it
        }, 2, options, rank => new ParallelTypes().Add<IRecorder>(() => new SignallingRecorder(rank), Agglomeration.Never));
    }

    [Fact]
    public async Task A_one_way_call_that_throws_fails_the_next_sync_call_and_raises_the_event()
    {
        await InWorldsAsync(async worlds =>
        {
            var raised = new TaskCompletionSource<OneWayCallFailedException>(TaskCreationOptions.RunContinuationsAsynchronously);
            worlds[0].OneWayCallFailed += (_, e) => raised.TrySetResult(e);
            IRecorder recorder = await worlds[0].CreateAsync<IRecorder>();
            recorder.Append(1);
            recorder.Fail("boom");
            recorder.Append(2);
            OneWayCallFailedException thrown = Assert.Throws<OneWayCallFailedException>(() => recorder.Count());
            Assert.Contains("boom", thrown.Message, StringComparison.Ordinal);
            Assert.Equal("System.InvalidOperationException", thrown.ExceptionType);
            Assert.Contains("Fail", thrown.Method, StringComparison.Ordinal);
            Assert.Equal("boom", (await raised.Task.WaitAsync(s_hang)).RemoteMessage);
            // Reported once; the calls after it ran.
            Assert.Equal([1, 2], recorder.Values());
        }, 2);
    }

    [Fact]
    public async Task A_fine_grained_type_is_agglomerated_once_measured_and_a_coarse_one_stays_distributed()
    {
        var options = new ParallelWorldOptions { Placement = new NextRankPlacement() };
        await InWorldsAsync(async worlds =>
        {
            IRecorder first = await worlds[0].CreateAsync<IRecorder>();
            ICoarse coarse = await worlds[0].CreateAsync<ICoarse>();
            Assert.False(worlds[0].IsLocal(first)); // nothing measured yet: the placement decides
            Assert.False(worlds[0].IsLocal(coarse));
            for (int i = 0; i < 20_000; i++)
            {
                first.Append(i);
            }
            for (int i = 0; i < 1_500; i++)
            {
                coarse.Work(20);
            }
            Assert.Equal(20_000, first.Count());
            Assert.Equal(1_500, coarse.Count());
            GrainMeasurement fine = worlds[0].Measure<IRecorder>();
            GrainMeasurement heavy = worlds[0].Measure<ICoarse>();
            // The world's own rule (ParallelWorldOptions.GrainFactor), which the placements below then show.
            Assert.True(fine.GrainNanoseconds < options.GrainFactor * fine.OverheadNanoseconds, fine.ToString());
            Assert.True(heavy.GrainNanoseconds > options.GrainFactor * heavy.OverheadNanoseconds, heavy.ToString());
            output.WriteLine(fine.ToString());
            Assert.True(worlds[0].IsLocal(await worlds[0].CreateAsync<IRecorder>()), fine.ToString());
            Assert.False(worlds[0].IsLocal(await worlds[0].CreateAsync<ICoarse>()), heavy.ToString());
        }, 2, options, rank => Types(rank, recorder: Agglomeration.Adaptive, coarse: Agglomeration.Adaptive));
    }

    [Fact]
    public void A_grain_probe_needs_its_type_added_first() =>
        Assert.Throws<InvalidOperationException>(() => new ParallelTypes().SetGrainProbe<IRecorder>(recorder => () => recorder.Append(0)));

    [Fact]
    public async Task Agglomeration_forced_on_or_off_overrides_the_measurement()
    {
        var options = new ParallelWorldOptions { Placement = new NextRankPlacement() };
        await InWorldsAsync(async worlds =>
        {
            Assert.True(worlds[0].IsLocal(await worlds[0].CreateAsync<IRecorder>()));
            ICoarse coarse = await worlds[0].CreateAsync<ICoarse>();
            for (int i = 0; i < 2_000; i++)
            {
                coarse.Work(0);
            }
            Assert.Equal(2_000, coarse.Count());
            Assert.False(worlds[0].IsLocal(await worlds[0].CreateAsync<ICoarse>()));
        }, 2, options, rank => Types(rank, recorder: Agglomeration.Always, coarse: Agglomeration.Never));
    }

    [Fact]
    public async Task A_reference_passed_to_another_rank_reaches_the_same_object()
    {
        await InWorldsAsync(async worlds =>
        {
            IRecorder recorder = await worlds[0].CreateAsync<IRecorder>(); // on rank 1
            ParallelRef where = worlds[0].RefOf(recorder);
            IRecorder fromTwo = await worlds[2].AttachAsync<IRecorder>(where);
            recorder.Append(1);
            worlds[0].Flush(recorder);
            fromTwo.Append(2);
            Assert.Equal([1, 2], fromTwo.Values());
            Assert.Equal(where, worlds[2].RefOf(fromTwo));
        }, 3);
    }

    [Fact]
    public async Task A_call_chain_that_comes_back_to_a_busy_rank_completes()
    {
        // 0 -> A (rank 1) -> B (rank 0) -> C (rank 1) -> D (rank 0): rank 1 still runs A's call from rank 0 when
        // rank 0 calls C there, and rank 0 still waits for A's reply when it sends the call to C.
        var worlds = new ParallelWorld[2];
        ParallelTypes HopTypes(int rank) => new ParallelTypes().Add<IHop>(() => new Hop(() => worlds[rank]), Agglomeration.Never);
        await InWorldsAsync(async joined =>
        {
            joined.CopyTo(worlds, 0);
            IHop a = await worlds[0].CreateAsync<IHop>();
            IHop b = await worlds[1].CreateAsync<IHop>();
            IHop c = await worlds[0].CreateAsync<IHop>();
            IHop d = await worlds[1].CreateAsync<IHop>();
            ParallelRef[] path = [worlds[0].RefOf(a), worlds[1].RefOf(b), worlds[0].RefOf(c), worlds[1].RefOf(d)];
            Assert.Equal([1, 0, 1, 0], path.Select(p => p.Rank));
            // One-way calls to A are held in front of the chain, and calls to C follow it: each object's calls keep their order.
            for (int i = 0; i < 10; i++)
            {
                a.Append(i);
            }
            int depth = await Task.Run(() => a.Relay(path, 0)).WaitAsync(s_hang);
            Assert.Equal(4, depth);
            c.Append(1);
            Assert.Equal(Enumerable.Range(0, 10), a.Values());
            Assert.Equal([1], c.Values());
        }, 2, new ParallelWorldOptions { Placement = new NextRankPlacement() }, HopTypes);
    }

    [Fact]
    public async Task A_released_object_is_dropped_by_its_rank_after_its_calls_and_later_calls_fail()
    {
        var made = new List<WeakReference>();
        ParallelTypes Tracked(int rank) => TrackedTypes(rank, recorder => made.Add(new WeakReference(recorder)));
        await InWorldsAsync(async worlds =>
        {
            IRecorder recorder = await worlds[0].CreateAsync<IRecorder>();
            IRecorder kept = await worlds[0].CreateAsync<IRecorder>();
            Assert.Equal(2, (await worlds[0].GetLoadsAsync(CancellationToken.None))[1]);
            for (int i = 0; i < 1000; i++)
            {
                recorder.Append(i);
            }
            Assert.True(await worlds[0].ReleaseAsync(recorder));
            Assert.False(await worlds[0].ReleaseAsync(recorder));
            Assert.Equal(1, (await worlds[0].GetLoadsAsync(CancellationToken.None))[1]);
            Exception late = Assert.ThrowsAny<Exception>(() => recorder.Count());
            Assert.Contains("was released", late.Message, StringComparison.Ordinal);
            kept.Append(5);
            Assert.Equal([5], kept.Values()); // the tunnel to rank 1 still serves its other objects
            // Rank 1 keeps no reference to the released object.
            await Task.Run(() =>
            {
                for (int i = 0; i < 20 && made[0].IsAlive; i++)
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                }
            });
            Assert.False(made[0].IsAlive, "the released object is still referenced on its rank");
            Assert.True(made[1].IsAlive);
            GC.KeepAlive(kept);
        }, 2, new ParallelWorldOptions { Placement = new NextRankPlacement() }, Tracked);
    }

    [Fact]
    public async Task With_release_when_collected_an_object_goes_once_every_proxy_of_it_on_any_rank_was_collected()
    {
        var made = new List<Recorder>();
        ParallelTypes Tracked(int rank) => TrackedTypes(rank, made.Add);
        var options = new ParallelWorldOptions { Placement = new NextRankPlacement(), ReleaseWhenCollected = true };
        await InWorldsAsync(async worlds =>
        {
            var dropped = new TaskCompletionSource<ParallelRef>(TaskCreationOptions.RunContinuationsAsynchronously);
            var droppedOnRank2 = new TaskCompletionSource<ParallelRef>(TaskCreationOptions.RunContinuationsAsynchronously);
            worlds[0].ProxyDropped += r => dropped.TrySetResult(r);
            worlds[2].ProxyDropped += r => droppedOnRank2.TrySetResult(r);
            IRecorder kept = await worlds[0].CreateAsync<IRecorder>();
            (WeakReference creatorsProxy, ParallelRef where) = await CreateAndCallAsync(worlds[0], 1000);
            // Rank 2 attaches the object by its reference: a second holder, kept alive until the test lets it go.
            object?[] rank2Holds = [null];
            WeakReference rank2Proxy = await AttachAndCallAsync(worlds[2], where, rank2Holds);
            Assert.Equal(2, (await worlds[0].GetLoadsAsync(CancellationToken.None))[1]);

            Collect(creatorsProxy);
            Assert.Equal(where, await dropped.Task.WaitAsync(s_hang));
            Assert.Equal(2, (await worlds[0].GetLoadsAsync(CancellationToken.None))[1]); // rank 2 still holds it

            rank2Holds[0] = null;
            Collect(rank2Proxy);
            Assert.Equal(where, await droppedOnRank2.Task.WaitAsync(s_hang));
            Assert.Equal(1, (await worlds[0].GetLoadsAsync(CancellationToken.None))[1]); // released; kept stays
            // The calls made through each proxy before it went ran before the release (each rank's in its order).
            Recorder released = Assert.Single(made, r => r.Count() == 1001);
            Assert.Equal(Enumerable.Range(0, 1000), released.Values().Where(v => v >= 0));
            Assert.Contains(-1, released.Values());
            await Assert.ThrowsAsync<XCallException>(() => worlds[2].AttachAsync<IRecorder>(where));
            kept.Append(5);
            Assert.Equal([5], kept.Values());
        }, 3, options, Tracked);
    }

    /// <summary>Recorders that tell <paramref name="made"/> of each one made (under one lock: ranks create at once).</summary>
    private static ParallelTypes TrackedTypes(int rank, Action<Recorder> made) => new ParallelTypes().Add<IRecorder>(() =>
    {
        var recorder = new Recorder(rank);
        lock (s_madeLock)
        {
            made(recorder);
        }
        return recorder;
    }, Agglomeration.Never);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Task<(WeakReference Proxy, ParallelRef Where)> CreateAndCallAsync(ParallelWorld world, int calls)
    {
        IRecorder recorder = await world.CreateAsync<IRecorder>();
        for (int i = 0; i < calls; i++)
        {
            recorder.Append(i); // held in the tunnel's batch when the proxy goes
        }
        return (new WeakReference(recorder), world.RefOf(recorder));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Task<WeakReference> AttachAndCallAsync(ParallelWorld world, ParallelRef where, object?[] holds)
    {
        IRecorder recorder = await world.AttachAsync<IRecorder>(where);
        recorder.Append(-1);
        holds[0] = recorder;
        return new WeakReference(recorder);
    }

    /// <summary>Collects until <paramref name="proxy"/>'s target is gone (its lease then queues the drop).</summary>
    private static void Collect(WeakReference proxy)
    {
        for (int i = 0; i < 20 && proxy.IsAlive; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.False(proxy.IsAlive, "the proxy is still referenced");
        GC.Collect();
        GC.WaitForPendingFinalizers(); // the lease, freed with the proxy, is finalized now
    }

    /// <summary>A policy of the test's own (placement is pluggable): always the rank after the creator's.</summary>
    private sealed class NextRankPlacement : PlacementPolicy
    {
        public override ValueTask<int> PlaceAsync(PlacementContext context, CancellationToken cancellationToken) =>
            ValueTask.FromResult((context.Rank + 1) % context.Size);
    }

    private sealed class SignallingRecorder(int rank) : IRecorder
    {
        public TaskCompletionSource<int> First { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Append(int value) => First.TrySetResult(value);

        public void Fail(string message) => throw new InvalidOperationException(message);

        public int Count() => First.Task.IsCompleted ? 1 : 0;

        public int[] Values() => First.Task.IsCompleted ? [First.Task.Result] : [];

        public int HostRank() => rank;
    }
}
