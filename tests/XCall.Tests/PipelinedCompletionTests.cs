using XCall.Tests.Contracts;

namespace XCall.Tests;

/// <summary>
/// Async calls pipelined on one connection to a real server process: their continuations run in batches off the
/// thread that reads the replies, and a continuation that blocks or makes a sync call holds up no other call.
/// </summary>
public sealed class PipelinedCompletionTests
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);

    /// <summary>Makes <paramref name="count"/> calls without awaiting any, then awaits them all and checks each result.</summary>
    private static async Task AssertAllReturn(int count, Func<int, Task<int>> call, Func<int, int> expected)
    {
        var calls = new Task<int>[count];
        for (int i = 0; i < count; i++)
        {
            calls[i] = call(i);
        }
        int[] results = await Task.WhenAll(calls).WaitAsync(Generous); // a stall ends here, as a failure
        for (int i = 0; i < count; i++)
        {
            Assert.Equal(expected(i), results[i]);
        }
    }

    /// <summary>A host process over <paramref name="transport"/> and a connection to its <see cref="IShapes"/>.</summary>
    private sealed class Served(string transport, string prefix) : IDisposable
    {
        public HostProcess Host { get; } = HostProcess.Start(
            transport == "shm" ? $"shm://{HostProcess.UniqueName(prefix)}" : $"tcp://127.0.0.1:0/{HostProcess.UniqueName(prefix)}", "--no-shm");

        public RemoteService<IShapes> Service => _service ??= Remote.Open<IShapes>(Host.Address);

        public IShapes Shapes => Service.Proxy;

        /// <summary>The host's probe, on a connection of its own.</summary>
        public IProbe Probe => (_probe ??= Remote.Open<IProbe>(Host.Address)).Proxy;

        private RemoteService<IShapes>? _service;
        private RemoteService<IProbe>? _probe;

        public void Dispose()
        {
            _probe?.Dispose();
            _service?.Dispose();
            Host.Dispose();
        }
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task Ten_thousand_pipelined_calls_all_complete_with_their_values(string transport)
    {
        using var served = new Served(transport, "pipe10k");
        Assert.Equal(transport, served.Service.Transport);
        await AssertAllReturn(10_000, i => served.Shapes.AddAsync(i, 1_000_000), i => i + 1_000_000);
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task Continuations_make_sync_calls_on_the_same_connection(string transport)
    {
        using var served = new Served(transport, "pipesync");

        // Each continuation runs where the reply's completion runs it (ConfigureAwait(false)) and makes a sync call there.
        async Task<int> AddThenAddAgain(int i)
        {
            int sum = await served.Shapes.AddAsync(i, 1).ConfigureAwait(false);
            return served.Shapes.Add(sum, 1);
        }

        await AssertAllReturn(2_000, AddThenAddAgain, i => i + 2);
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task A_continuation_that_blocks_holds_up_no_other_call(string transport)
    {
        using var served = new Served(transport, "pipeblock");
        IShapes shapes = served.Shapes;
        using var blocking = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();

        // The reply comes after the await is in place, so the continuation runs where replies complete calls.
        Task trigger = shapes.DelayAsync(200, CancellationToken.None);
        Assert.False(trigger.IsCompleted);
        Task blocker = BlockAfter(trigger);

        async Task BlockAfter(Task call)
        {
            await call.ConfigureAwait(false);
            blocking.Set();
            Assert.True(release.Wait(Generous), "the blocked continuation was never released");
        }

        Assert.True(blocking.Wait(Generous));
        await AssertAllReturn(1_000, i => shapes.AddAsync(i, 7), i => i + 7); // a stall behind the blocker would fail here
        Assert.False(blocker.IsCompleted);
        release.Set();
        await blocker.WaitAsync(Generous);
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task A_continuation_waiting_in_a_long_sync_call_holds_up_no_other_call(string transport)
    {
        using var served = new Served(transport, "pipelong");
        using RemoteService<IProbe> probe = Remote.Open<IProbe>(served.Host.Address);
        IShapes shapes = served.Shapes;
        using var cancel = new CancellationTokenSource();

        Task trigger = shapes.DelayAsync(200, CancellationToken.None);
        Assert.False(trigger.IsCompleted);
        Task<Exception?> waiter = WaitAfter(trigger);

        async Task<Exception?> WaitAfter(Task call)
        {
            await call.ConfigureAwait(false);
            try
            {
                shapes.WaitForCancel(cancel.Token); // blocks this continuation until the test cancels it
                return null;
            }
            catch (Exception ex)
            {
                return ex;
            }
        }

        using var started = new CancellationTokenSource(Generous);
        Assert.Equal(nameof(IShapes.DelayAsync), await probe.Proxy.NextStartedAsync(started.Token)); // the trigger
        Assert.Equal(nameof(IShapes.WaitForCancel), await probe.Proxy.NextStartedAsync(started.Token));
        await AssertAllReturn(1_000, i => shapes.AddAsync(i, 3), i => i + 3);
        Assert.False(waiter.IsCompleted);
        cancel.Cancel();
        Assert.IsAssignableFrom<OperationCanceledException>(await waiter.WaitAsync(Generous));
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task Every_pipelined_call_fails_when_the_server_dies_mid_batch(string transport)
    {
        using var served = new Served(transport, "pipekill");
        using RemoteService<IProbe> probe = Remote.Open<IProbe>(served.Host.Address);
        IShapes shapes = served.Shapes;

        // Quick calls around calls the server holds: some finish, the held ones are in flight when it dies.
        var calls = new List<Task>();
        for (int i = 0; i < 2_000; i++)
        {
            calls.Add(i % 100 == 0 ? shapes.DelayAsync(600_000, CancellationToken.None) : shapes.AddAsync(i, 1));
        }
        using var started = new CancellationTokenSource(Generous);
        Assert.Equal(nameof(IShapes.DelayAsync), await probe.Proxy.NextStartedAsync(started.Token));
        served.Host.Kill();
        await Task.WhenAny(Task.WhenAll(calls)).WaitAsync(Generous); // every call ends: none waits for ever
        int failed = 0;
        for (int i = 0; i < calls.Count; i++)
        {
            Task call = calls[i];
            if (i % 100 == 0)
            {
                Assert.IsType<XCallDisconnectedException>(call.Exception?.InnerException);
                failed++;
            }
            else if (call.IsCompletedSuccessfully)
            {
                Assert.Equal(i + 1, ((Task<int>)call).Result);
            }
            else
            {
                Assert.IsType<XCallDisconnectedException>(call.Exception?.InnerException);
            }
        }
        Assert.Equal(20, failed);
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task Pipelined_calls_with_some_cancelled_midway_end_each_as_it_should(string transport)
    {
        using var cancel = new CancellationTokenSource();
        using var served = new Served(transport, "pipecancel");
        IShapes shapes = served.Shapes;

        // Task<int> and ValueTask<string> calls (no token: completed without a state machine) around held calls
        // with a token, which the test cancels while the rest are in flight.
        const int Count = 2_000;
        var calls = new Task[Count];
        for (int i = 0; i < Count; i++)
        {
            calls[i] = (i % 3, i % 100) switch
            {
                (_, 50) => shapes.DelayAsync(600_000, cancel.Token),
                (0, _) => shapes.ConcatAsync("v", i.ToString(System.Globalization.CultureInfo.InvariantCulture)).AsTask(),
                _ => shapes.AddAsync(i, 5),
            };
        }
        using var started = new CancellationTokenSource(Generous);
        Assert.Equal(nameof(IShapes.DelayAsync), await served.Probe.NextStartedAsync(started.Token)); // one is held now
        cancel.Cancel();
        await Task.WhenAny(Task.WhenAll(calls)).WaitAsync(Generous);
        for (int i = 0; i < Count; i++)
        {
            if (i % 100 == 50)
            {
                Assert.True(calls[i].IsCanceled, $"call {i}: {calls[i].Status}");
            }
            else if (i % 3 == 0)
            {
                Assert.Equal("v" + i.ToString(System.Globalization.CultureInfo.InvariantCulture), await (Task<string>)calls[i]);
            }
            else
            {
                Assert.Equal(i + 5, await (Task<int>)calls[i]);
            }
        }
        Assert.Equal(9, await shapes.AddAsync(4, 5).WaitAsync(Generous)); // the connection serves on
    }
}
