namespace XCall.Cluster.Tests;

/// <summary>Worlds whose ranks are <see cref="ClusterWorld"/>s of this process, joined through a real store over shm and tcp.</summary>
public sealed class InProcessWorldTests
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(30);

    private sealed class EchoRank(int rank) : IEchoRank
    {
        public int Rank() => rank;
    }

    internal static async Task<ClusterWorld[]> JoinAsync(int size, string store, RemoteOptions? remote = null)
    {
        string job = $"t{Environment.ProcessId}-{Guid.NewGuid():N}"[..24];
        store = store.Replace("JOB", job, StringComparison.Ordinal);
        Task<ClusterWorld>[] joins = [.. Enumerable.Range(0, size).Select(rank => ClusterWorld.JoinAsync(new ClusterOptions
        {
            Environment = new WorldEnvironment
            {
                Launcher = Launcher.XCall, Rank = rank, Size = size, LocalRank = rank, Node = "node-a", OneNode = true, JobId = job, StoreAddress = store,
            },
            Services = new XCallServer().Add<IEchoRank>(new EchoRank(rank)),
            JoinTimeout = s_hang,
            Remote = remote ?? RemoteOptions.Default,
        }))];
        return await Task.WhenAll(joins).WaitAsync(s_hang);
    }

    internal static Task LeaveAsync(ClusterWorld[] worlds) =>
        Task.WhenAll(worlds.Select(w => w.DisposeAsync().AsTask())).WaitAsync(s_hang);

    [Theory]
    [InlineData("shm://xcall-store-JOB")]
    [InlineData("tcp://127.0.0.1:0/xcall-store-JOB")]
    public async Task Every_rank_reaches_every_other_rank(string store)
    {
        if (store.StartsWith("tcp", StringComparison.Ordinal))
        {
            store = store.Replace(":0/", $":{FreePort()}/", StringComparison.Ordinal);
        }
        // Over tcp the ranks do not take the store's shared-memory twin, so the store is reached over a socket.
        ClusterWorld[] worlds = await JoinAsync(3, store, new RemoteOptions { PreferSharedMemory = false });
        try
        {
            foreach (ClusterWorld world in worlds)
            {
                for (int peer = 0; peer < world.Size; peer++)
                {
                    IEchoRank echo = await world.OpenAsync<IEchoRank>(peer);
                    Assert.Equal(peer, echo.Rank());
                    Assert.Same(echo, await world.OpenAsync<IEchoRank>(peer)); // opened once, kept
                    Assert.StartsWith("shm://", world.GetAddress(peer), StringComparison.Ordinal);
                    Assert.Equal("node-a", world.GetNode(peer));
                }
            }
        }
        finally
        {
            await LeaveAsync(worlds);
        }
        Assert.All(worlds, w => Assert.Empty(w.Failures));
    }

    [Fact]
    public async Task A_name_registered_by_one_rank_is_found_by_the_others()
    {
        ClusterWorld[] worlds = await JoinAsync(3, "shm://xcall-store-JOB");
        try
        {
            Task<string> waiting = worlds[2].Names.WaitForAsync("service", s_hang);
            Assert.Null(await worlds[0].Names.LookUpAsync("service"));
            await worlds[1].Names.RegisterAsync("service", "tcp://h:1/x");
            await worlds[1].Names.RegisterAsync("service", "tcp://h:1/x"); // the same value again
            Assert.Equal("tcp://h:1/x", await waiting);
            Assert.Equal("tcp://h:1/x", await worlds[0].Names.LookUpAsync("service"));
            await Assert.ThrowsAsync<InvalidOperationException>(() => worlds[2].Names.RegisterAsync("service", "other"));
        }
        finally
        {
            await LeaveAsync(worlds);
        }
    }

    [Fact]
    public async Task Waiting_for_a_name_ends_at_its_timeout_or_its_token()
    {
        ClusterWorld[] worlds = await JoinAsync(2, "shm://xcall-store-JOB");
        try
        {
            TimeoutException timeout = await Assert.ThrowsAsync<TimeoutException>(() => worlds[1].Names.WaitForAsync("never", TimeSpan.FromMilliseconds(50)));
            Assert.Contains("'never'", timeout.Message, StringComparison.Ordinal);
            using var cancel = new CancellationTokenSource();
            Task<string> waiting = worlds[0].Names.WaitForAsync("never", s_hang, cancel.Token);
            await cancel.CancelAsync();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiting);
        }
        finally
        {
            await LeaveAsync(worlds);
        }
    }

    [Theory]
    [InlineData(2)]
    [InlineData(0)]
    public async Task A_rank_whose_connections_close_before_it_left_fails_what_involves_it(int dying)
    {
        ClusterWorld[] worlds = await JoinAsync(3, "shm://xcall-store-JOB");
        ClusterWorld[] survivors = [.. worlds.Where(w => w.Rank != dying)];
        Task<RankFailedException>[] seen = [.. survivors.Select(w =>
        {
            var failed = new TaskCompletionSource<RankFailedException>(TaskCreationOptions.RunContinuationsAsynchronously);
            w.RankFailed += (_, e) => failed.TrySetResult(e);
            return failed.Task;
        })];
        foreach (ClusterWorld world in survivors)
        {
            Assert.Equal(dying, (await world.OpenAsync<IEchoRank>(dying)).Rank());
        }
        Task<string> waiting = survivors[0].Names.WaitForAsync("never", s_hang);

        worlds[dying].CloseWithoutLeaving();

        foreach (Task<RankFailedException> failure in seen)
        {
            Assert.Equal(dying, (await failure.WaitAsync(s_hang)).Rank);
        }
        RankFailedException waitFailure = await Assert.ThrowsAsync<RankFailedException>(() => waiting.WaitAsync(s_hang));
        Assert.Equal(dying, waitFailure.Rank);
        Assert.StartsWith($"Rank {dying} failed: ", waitFailure.Message, StringComparison.Ordinal);
        foreach (ClusterWorld world in survivors)
        {
            Assert.Equal(dying, (await Assert.ThrowsAsync<RankFailedException>(() => world.OpenAsync<IEchoRank>(dying))).Rank);
            Assert.Equal([dying], world.Failures.Select(f => f.Rank));
        }
        await LeaveAsync(survivors);
    }

    [Fact]
    public async Task A_world_of_one_needs_no_store_and_keeps_its_names()
    {
        await using ClusterWorld world = await ClusterWorld.JoinAsync(new ClusterOptions
        {
            Environment = WorldEnvironment.Detect(new Dictionary<string, string>(), "solo", 0),
        });
        Assert.Equal((0, 1), (world.Rank, world.Size));
        await world.Names.RegisterAsync("me", "here");
        Assert.Equal("here", await world.Names.WaitForAsync("me", s_hang));
    }

    [Fact]
    public async Task Joining_fails_with_a_timeout_when_rank_0_never_comes()
    {
        string job = Guid.NewGuid().ToString("N");
        TimeoutException error = await Assert.ThrowsAsync<TimeoutException>(() => ClusterWorld.JoinAsync(new ClusterOptions
        {
            Environment = new WorldEnvironment
            {
                Launcher = Launcher.XCall, Rank = 1, Size = 2, LocalRank = 1, Node = "n", OneNode = true, JobId = job, StoreAddress = $"shm://xcall-store-{job}",
            },
            JoinTimeout = TimeSpan.FromMilliseconds(300),
        }));
        Assert.Contains("store", error.Message, StringComparison.Ordinal);
    }

    private static int FreePort()
    {
        using var probe = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        probe.Bind(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
        return ((System.Net.IPEndPoint)probe.LocalEndPoint!).Port;
    }
}
