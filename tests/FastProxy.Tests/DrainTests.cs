using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Transport;

namespace XCall.FastProxy.Tests;

/// <summary>XCallServer.DrainAsync: new calls refused, calls in flight (and the callbacks they wait for) finish.</summary>
public sealed class DrainTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task A_drain_refuses_new_calls_lets_a_nested_call_through_and_ends_when_the_call_in_flight_answers()
    {
        using var server = new XCallServer().Add<ICallbacks>(new Callbacks()).Add<IShapes>(new Shapes());
        using XCallConnection client = Connect(server);
        ICallbacks callbacks = client.GetService<ICallbacks>();
        IShapes shapes = client.GetService<IShapes>();
        Assert.Equal(0, server.CallsInFlight);

        // The call in flight: the server calls back, and the callback calls the server again (nested), once let go.
        var gated = new GatedCallback(() => callbacks.CallBack(new GatedCallback(() => 0), 0));
        Task<int> inFlight = Task.Run(() => callbacks.CallBack(gated, 1));
        await gated.Entered.Task.WaitAsync(s_wait);
        Assert.Equal(1, server.CallsInFlight);

        Task drained = server.DrainAsync();
        Assert.False(drained.IsCompleted, "the drain ended with a call in flight");
        XCallServerBusyException refused = Assert.Throws<XCallServerBusyException>(() => shapes.Add(1, 2));
        Assert.Contains("the server is stopping", refused.Reason, StringComparison.Ordinal);

        gated.Go.Set();
        Assert.Equal(1, await inFlight.WaitAsync(s_wait)); // the nested call inside it was served
        await drained.WaitAsync(s_wait);
        Assert.Equal(0, server.CallsInFlight);
        Assert.Throws<XCallServerBusyException>(() => shapes.Add(1, 2)); // still refusing
    }

    [Fact]
    public async Task A_drain_with_nothing_in_flight_ends_at_once_and_a_cancelled_one_leaves_the_call_running()
    {
        using var server = new XCallServer().Add<ICallbacks>(new Callbacks());
        using XCallConnection client = Connect(server);
        ICallbacks callbacks = client.GetService<ICallbacks>();
        var gated = new GatedCallback(() => 0);
        Task<int> inFlight = Task.Run(() => callbacks.CallBack(gated, 2));
        await gated.Entered.Task.WaitAsync(s_wait);

        using var timeout = new CancellationTokenSource();
        Task drained = server.DrainAsync(timeout.Token);
        await timeout.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => drained.WaitAsync(s_wait));

        gated.Go.Set(); // the call was not cut: it answers
        Assert.Equal(1 + 2, await inFlight.WaitAsync(s_wait));
        await server.DrainAsync().WaitAsync(s_wait);
    }

    [Fact]
    public async Task A_drain_ends_when_calls_in_flight_answer_at_once_whichever_returns_last()
    {
        // The first call takes the connection's spare (counted without an interlocked add), the others pooled calls:
        // let go together, any of them may return last, and the drain must see it.
        for (int round = 0; round < 20; round++)
        {
            using var server = new XCallServer().Add<ICallbacks>(new Callbacks());
            using XCallConnection client = Connect(server);
            ICallbacks callbacks = client.GetService<ICallbacks>();
            var gates = new GatedCallback[4];
            var calls = new Task<int>[gates.Length];
            for (int i = 0; i < gates.Length; i++)
            {
                int index = i;
                var gate = gates[i] = new GatedCallback(() => index);
                calls[i] = Task.Run(() => callbacks.CallBack(gate, 1)); // one report of 1, plus i
                await gate.Entered.Task.WaitAsync(s_wait);
            }
            Assert.Equal(gates.Length, server.CallsInFlight);
            Task drained = server.DrainAsync();
            Assert.False(drained.IsCompleted, "the drain ended with calls in flight");
            Parallel.ForEach(gates, gate => gate.Go.Set());
            for (int i = 0; i < calls.Length; i++)
            {
                Assert.Equal(1 + i, await calls[i].WaitAsync(s_wait));
            }
            await drained.WaitAsync(s_wait);
            Assert.Equal(0, server.CallsInFlight);
        }
    }

    /// <summary>A started client connection to <paramref name="server"/> over an in-memory channel pair.</summary>
    private static XCallConnection Connect(XCallServer server)
    {
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair();
        server.Attach(s);
        var client = new XCallConnection(c);
        client.Start();
        return client;
    }

    /// <summary>Holds each report until <see cref="Go"/> is set; returns the value plus what <paramref name="inside"/> returns.</summary>
    private sealed class GatedCallback(Func<int> inside) : ICallback
    {
        public TaskCompletionSource Entered { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public ManualResetEventSlim Go { get; } = new();

        public int Report(int value)
        {
            Entered.TrySetResult();
            Assert.True(Go.Wait(s_wait), "the test did not let the callback go");
            return inside() + value;
        }

        public int Nested(int depth) => depth;
    }
}
