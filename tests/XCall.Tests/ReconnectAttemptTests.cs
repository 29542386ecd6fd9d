using XCall.Runtime;
using XCall.Tests.Contracts;
using static XCall.Tests.ReconnectTests;

namespace XCall.Tests;

/// <summary>
/// The reconnect attempt itself, over in-memory links: the real <see cref="ReconnectingChannel"/>, with a connect
/// that waits for the test, so the callers are seen while the attempt is under way.
/// </summary>
public sealed class ReconnectAttemptTests
{
    [Fact]
    public async Task Async_and_sync_calls_made_while_the_link_is_down_share_one_attempt_that_runs_off_the_callers_thread()
    {
        using var rig = new Rig();
        await rig.LoseFirstLink();

        Task<int> first = await Returned(() => rig.Service.AddAsync(1, 1));
        await rig.Connecting.WaitAsync(s_bound);
        Task<int> second = rig.Service.AddAsync(2, 2);
        Task<int> blocking = Task.Run(() => rig.Service.Add(3, 3)); // a synchronous call waits for the same attempt
        Assert.False(first.IsCompleted);
        Assert.False(second.IsCompleted);

        rig.Gate.Set();

        Assert.Equal(2, await first.WaitAsync(s_bound));
        Assert.Equal(4, await second.WaitAsync(s_bound));
        Assert.Equal(6, await blocking.WaitAsync(s_bound));
        Assert.Equal(1, rig.Connects);
        Assert.Equal(1, rig.Channel.LinkGeneration);
    }

    [Fact]
    public async Task An_async_call_made_during_the_backoff_fails_in_its_task_not_on_its_callers_thread()
    {
        using var rig = new Rig(s_options with { ReconnectBackoff = TimeSpan.FromMinutes(1), MaxReconnectBackoff = TimeSpan.FromMinutes(1) }) { FailConnects = true };
        await rig.LoseFirstLink();
        rig.Gate.Set();
        await Assert.ThrowsAsync<XCallDisconnectedException>(() => rig.Service.AddAsync(1, 1)); // the attempt fails: the backoff starts

        Task<int> call = await Returned(() => rig.Service.AddAsync(1, 1)); // no exception here: the caller gets a task

        var refused = await Assert.ThrowsAsync<XCallDisconnectedException>(() => call);
        Assert.Contains("next attempt", refused.Message);
        Assert.Equal(1, rig.Connects);
    }

    [Fact]
    public async Task Disposing_the_service_ends_the_wait_of_async_calls_behind_a_reconnect()
    {
        var rig = new Rig();
        await rig.LoseFirstLink();
        Task<int> call = await Returned(() => rig.Service.AddAsync(1, 1));
        await rig.Connecting.WaitAsync(s_bound);

        rig.Dispose();

        await Assert.ThrowsAsync<XCallDisconnectedException>(() => call.WaitAsync(s_bound));
        rig.Gate.Set();
    }

    /// <summary>A connection over a reconnecting channel: link 0 to server A; a reconnect waits for <see cref="Gate"/>, then links to server B.</summary>
    private sealed class Rig : IDisposable
    {
        private readonly InMemoryChannel _firstServerSide;
        private readonly TaskCompletionSource _lost = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource _connecting = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _connects;

        public Rig(RemoteOptions? options = null)
        {
            XCallServer serverA = new XCallServer().Add<IShapes>(new Shapes());
            XCallServer serverB = new XCallServer().Add<IShapes>(new Shapes());
            (InMemoryChannel client0, _firstServerSide) = InMemoryChannel.CreatePair("link0");
            serverA.Attach(_firstServerSide);
            var channel = new ReconnectingChannel(client0, () =>
            {
                Interlocked.Increment(ref _connects);
                _connecting.TrySetResult();
                // Bounded, so a connect made on a caller's thread (the behaviour the tests rule out) ends.
                Gate.Wait(TimeSpan.FromMinutes(1));
                if (FailConnects)
                {
                    throw new XCallDisconnectedException("mem://link1/server", "refused on purpose");
                }
                (InMemoryChannel client1, InMemoryChannel server1) = InMemoryChannel.CreatePair("link1");
                serverB.Attach(server1);
                return client1;
            }, options ?? s_options);
            Channel = channel;
            Connection = new XCallConnection(channel);
            Connection.Start();
            Service = Connection.GetService<IShapes>();
            channel.AfterReconnect = () => Connection.GetService<IShapes>(); // as Remote.Open does: Hello on the new link
            Connection.LinkLost += (_, _) => _lost.TrySetResult();
        }

        public ManualResetEventSlim Gate { get; } = new();

        public bool FailConnects { get; init; }

        public Task Connecting => _connecting.Task;

        public ReconnectingChannel Channel { get; }

        public XCallConnection Connection { get; }

        public IShapes Service { get; }

        public int Connects => Volatile.Read(ref _connects);

        /// <summary>Closes link 0 from the server's side and waits until the connection has handled the loss.</summary>
        public Task LoseFirstLink()
        {
            Assert.Equal(3, Service.Add(1, 2));
            _firstServerSide.Dispose();
            return _lost.Task.WaitAsync(s_bound);
        }

        public void Dispose() => Connection.Dispose();
    }
}
