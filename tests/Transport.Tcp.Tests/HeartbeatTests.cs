using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

/// <summary>A peer that dies or stops answering never hangs the other side. Bounds are 10x the configured
/// timeout; the measured figure goes to the test output.</summary>
public sealed class HeartbeatTests(ITestOutputHelper output)
{
    private static readonly TcpOptions Short = new()
    {
        HeartbeatInterval = TimeSpan.FromMilliseconds(100),
        HeartbeatTimeout = TimeSpan.FromMilliseconds(400),
    };

    [Fact]
    public async Task Silent_peer_is_declared_dead_after_the_heartbeat_timeout()
    {
        (RawPeer accepted, FrameChannel connected) = await RawPeer.AcceptHandshakenAsync(Short); // then never a byte more
        using RawPeer silent = accepted;
        using FrameChannel channel = connected;
        var replies = new ReplyCollector();
        var clock = Stopwatch.StartNew();
        channel.Start(replies);
        Task<byte[]> pending = replies.Reply(1);
        Frames.Send(channel, FrameKind.Call, 1, [1, 2, 3, 4]);

        Exception? error = await replies.Closed.WaitAsync(Short.HeartbeatTimeout * 10);
        clock.Stop();

        var disconnected = Assert.IsType<XCallDisconnectedException>(error);
        Assert.Contains("no heartbeat for 400 ms", disconnected.Message);
        Assert.Equal(channel.RemoteEndpoint, disconnected.Endpoint);
        await Assert.ThrowsAsync<XCallDisconnectedException>(() => pending);
        output.WriteLine($"silent peer detected after {clock.ElapsedMilliseconds} ms (timeout 400 ms)");
    }

    [Fact]
    public async Task A_close_handler_that_blocks_does_not_stop_the_shared_heartbeat_thread()
    {
        // The heartbeat thread beats for every channel of the process (shared memory too): the close of a silent
        // peer's channel, which runs handlers' code, must not run on it.
        (RawPeer accepted, FrameChannel connected) = await RawPeer.AcceptHandshakenAsync(Short);
        using RawPeer silent = accepted;
        using FrameChannel channel = connected;
        var ticks = new TickCounter();
        HeartbeatScheduler.Register(ticks, 400);
        using var release = new ManualResetEventSlim();
        var blocking = new BlockingOnClose(release);
        try
        {
            channel.Start(blocking);
            await blocking.Entered.Task.WaitAsync(Short.HeartbeatTimeout * 10);
            long before = ticks.Count;
            await ticks.Reached(before + 3).WaitAsync(TimeSpan.FromSeconds(10));
        }
        finally
        {
            release.Set();
            HeartbeatScheduler.Unregister(ticks);
        }
    }

    private sealed class TickCounter : IHeartbeatChannel
    {
        private long _count;
        private (long Target, TaskCompletionSource Done)? _waiter;

        public long Count => Interlocked.Read(ref _count);

        public Task Reached(long target)
        {
            var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _waiter = (target, done);
            if (Count >= target)
            {
                done.TrySetResult();
            }
            return done.Task;
        }

        public void OnHeartbeatTick(long now, long stalledMs)
        {
            long count = Interlocked.Increment(ref _count);
            if (_waiter is { } waiter && count >= waiter.Target)
            {
                waiter.Done.TrySetResult();
            }
        }
    }

    private sealed class BlockingOnClose(ManualResetEventSlim release) : IFrameHandler
    {
        public TaskCompletionSource Entered { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public XCall.Marshal.MarshalLimits Limits => XCall.Marshal.MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref XCall.Marshal.MarshalReader payload)
        {
        }

        public void OnClosed(Exception? error)
        {
            Entered.TrySetResult();
            release.Wait(TimeSpan.FromSeconds(30));
        }
    }

    [Fact]
    public async Task Idle_channel_sends_pings_and_answers_the_peers_pings()
    {
        // Pings every interval, but a generous timeout: the raw peer only answers pings, so a slow
        // (loaded) test process must not look dead.
        (RawPeer accepted, FrameChannel connected) = await RawPeer.AcceptHandshakenAsync(Short with { HeartbeatTimeout = TimeSpan.FromSeconds(30) });
        using RawPeer raw = accepted;
        using FrameChannel channel = connected;
        var replies = new ReplyCollector { RecordOrder = true };
        channel.Start(replies);

        (FrameKind kind, _, byte[] payload) = await raw.ReadFrameAsync().WaitAsync(Timeouts.Long);
        Assert.Equal(FrameKind.Ping, kind);
        Assert.Empty(payload);

        await raw.SendAsync(RawPeer.Prefix(0, FrameKind.Ping, 5));
        do
        {
            (kind, ulong callId, _) = await raw.ReadFrameAsync().WaitAsync(Timeouts.Long);
            if (kind == FrameKind.Pong)
            {
                Assert.Equal(5UL, callId);
            }
        }
        while (kind != FrameKind.Pong);
        Assert.Empty(replies.Order);
        Assert.False(replies.Closed.IsCompleted);
    }

    [Fact]
    public async Task Idle_connection_between_two_channels_outlives_many_heartbeat_timeouts()
    {
        var options = Short with { HeartbeatTimeout = TimeSpan.FromMilliseconds(600) };
        using var server = new EchoServer(options);
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port, options);
        var replies = new ReplyCollector();
        channel.Start(replies);
        EchoHandler serverSide = await server.NextAcceptedAsync();

        // Nothing to await here: the point is that nothing happens while time passes.
        await Task.Delay(options.HeartbeatTimeout * 3);

        Assert.False(replies.Closed.IsCompleted, replies.Closed.IsCompleted ? replies.Closed.Result?.Message : null);
        Assert.False(serverSide.Closed.IsCompleted);
        Assert.Equal([7], await Frames.CallAsync(channel, replies, 1, [7]));
    }

    [Fact]
    public async Task Connect_times_out_naming_the_endpoint_when_the_server_never_answers()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(); // accepted by the kernel, never answered
        int port = ((IPEndPoint)listener.LocalEndPoint!).Port;
        var options = new TcpOptions { ConnectTimeout = TimeSpan.FromMilliseconds(300) };

        var clock = Stopwatch.StartNew();
        var error = await Assert.ThrowsAsync<TimeoutException>(() => TcpTransport.ConnectAsync("127.0.0.1", port, options).WaitAsync(Timeouts.Long));
        output.WriteLine($"connect timed out after {clock.ElapsedMilliseconds} ms (timeout 300 ms): {error.Message}");
        Assert.Contains($"tcp://127.0.0.1:{port}", error.Message);
    }

    [Fact]
    public async Task Listener_drops_a_client_that_never_completes_its_handshake()
    {
        var options = new TcpOptions { ConnectTimeout = TimeSpan.FromMilliseconds(300) };
        using var server = new EchoServer(options);
        Task<RawPeer> connecting = RawPeer.ConnectAsync(server.Port);

        (_, Exception error) = await server.NextHandshakeFailureAsync();
        Assert.IsType<TimeoutException>(error);
        try
        {
            using RawPeer mute = await connecting;
            Assert.True(await mute.WaitForCloseAsync());
        }
        catch (SocketException reset) when (reset.SocketErrorCode == SocketError.ConnectionReset)
        {
            // The kernel completed the connect, but this side saw it only after the listener had dropped it.
        }
    }

    [Fact]
    public async Task Connect_to_a_closed_port_fails_with_a_disconnect_naming_the_endpoint()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        int port = ((IPEndPoint)probe.LocalEndPoint!).Port; // bound, not listening: refused

        var error = await Assert.ThrowsAsync<XCallDisconnectedException>(() => TcpTransport.ConnectAsync("127.0.0.1", port));
        Assert.Equal($"tcp://127.0.0.1:{port}", error.Endpoint);
        Assert.Contains("ConnectionRefused", error.Message);
    }

    [Fact]
    public void Heartbeat_runs_on_one_shared_timer_ticking_at_a_quarter_of_the_shortest_interval()
    {
        // Other tests run in parallel, so only the registration of this test's channels is certain.
        using var listener = TcpTransport.Listen(new IPEndPoint(IPAddress.Loopback, 0), Short);
        using FrameChannel a = TcpTransport.Connect("127.0.0.1", listener.LocalEndpoint.Port, Short);
        using FrameChannel b = listener.Accept();
        Assert.InRange(HeartbeatScheduler.PeriodMs, 10, 25);
    }
}
