using XCall.Runtime;
using XCall.Transport;
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
    public async Task An_async_calls_reconnect_awaits_the_contract_check_and_a_sync_calls_runs_it_on_its_thread()
    {
        using var rig = new Rig();
        int awaited = 0;
        int waited = 0;
        rig.Channel.AfterReconnect = () =>
        {
            Interlocked.Increment(ref waited);
            rig.Connection.GetService<IShapes>();
        };
        rig.Channel.AfterReconnectAsync = async () =>
        {
            Interlocked.Increment(ref awaited);
            await rig.Connection.GetServiceAsync<IShapes>();
        };
        await rig.LoseFirstLink();
        rig.Gate.Set();
        Assert.Equal(2, await rig.Service.AddAsync(1, 1).WaitAsync(s_bound)); // reconnects in the background
        Assert.Equal(1, Volatile.Read(ref awaited));
        Assert.Equal(0, Volatile.Read(ref waited));
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

    [Fact]
    public async Task A_dispose_between_publishing_a_new_link_and_starting_it_fails_the_call_as_closed_and_closes_the_connection()
    {
        // The new link's Start runs the Dispose first (the race, made certain), then refuses to start a disposed
        // link, as the shared-memory channel does.
        var rig = new Rig { WrapNewLink = (inner, channel) => new DisposingOnStart(inner, channel) };
        await rig.LoseFirstLink();
        var closed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        rig.Connection.Closed += (_, _) => closed.TrySetResult();
        Task<int> call = await Returned(() => rig.Service.AddAsync(1, 1));
        rig.Gate.Set();

        var failed = await Assert.ThrowsAsync<XCallDisconnectedException>(() => call.WaitAsync(s_bound)); // was ObjectDisposedException
        Assert.Contains("closed", failed.Message);
        await closed.Task.WaitAsync(s_bound); // the handler learnt that the channel closed
        Assert.True(rig.Connection.IsClosed);
    }

    /// <summary>A link whose Start disposes the reconnecting channel first, then refuses to start if that closed it.</summary>
    private sealed class DisposingOnStart(FrameChannel inner, ReconnectingChannel owner) : FrameChannel
    {
        private bool _disposed;

        public override string RemoteEndpoint => inner.RemoteEndpoint;

        public override void Start(IFrameHandler handler)
        {
            owner.Dispose();
            ObjectDisposedException.ThrowIf(_disposed, this);
            inner.Start(handler);
        }

        public override System.Buffers.IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline) => inner.BeginFrame(header, deadline);

        public override void CommitFrame() => inner.CommitFrame();

        public override void AbortFrame() => inner.AbortFrame();

        public override void Dispose()
        {
            _disposed = true;
            inner.Dispose();
        }
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
                return WrapNewLink is { } wrap ? wrap(client1, Channel!) : client1;
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

        /// <summary>Wraps the link a reconnect makes (to play a link that misbehaves).</summary>
        public Func<FrameChannel, ReconnectingChannel, FrameChannel>? WrapNewLink { get; init; }

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
