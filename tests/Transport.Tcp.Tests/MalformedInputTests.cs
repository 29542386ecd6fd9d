using XCall.Marshal;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

/// <summary>Bad bytes from one peer close that peer's connection only; the listener and its other clients go on.</summary>
public sealed class MalformedInputTests
{
    private static readonly TcpOptions Options = new() { MaxFrameSize = 1024 * 1024 };

    [Fact]
    public async Task Wrong_magic_is_refused_at_the_handshake_and_the_listener_keeps_serving()
    {
        using var server = new EchoServer(Options);
        using FrameChannel good = await ConnectGoodClientAsync(server);

        using RawPeer raw = await RawPeer.ConnectAsync(server.Port);
        await raw.SendAsync("GET / HTTP/1.1\r\n\r\n"u8.ToArray());

        Assert.True(await raw.WaitForCloseAsync());
        (string peer, Exception error) = await server.NextHandshakeFailureAsync();
        Assert.IsType<XCallProtocolException>(error);
        Assert.Contains("XCAL", error.Message);
        Assert.StartsWith("tcp://127.0.0.1:", peer);
        await AssertStillServesAsync(server, good);
    }

    [Theory]
    [InlineData(99, 0, "version 99")]         // another transport version
    [InlineData(1, 0x0101, "0x0101")]         // the reserved field, zero in version 1
    public async Task A_preamble_this_build_does_not_speak_is_refused_with_a_clear_error(int version, int reserved, string named)
    {
        using var server = new EchoServer(Options);
        using FrameChannel good = await ConnectGoodClientAsync(server);

        using RawPeer raw = await RawPeer.ConnectAsync(server.Port);
        await raw.SendAsync(RawPeer.Preamble(version: (ushort)version, reserved: (ushort)reserved));

        Assert.True(await raw.WaitForCloseAsync());
        (_, Exception error) = await server.NextHandshakeFailureAsync();
        Assert.IsType<XCallProtocolException>(error);
        Assert.Contains(named, error.Message);
        await AssertStillServesAsync(server, good);
    }

    [Fact]
    public async Task Client_refuses_a_server_of_another_transport_version()
    {
        using var listener = new System.Net.Sockets.Socket(System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        listener.Bind(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
        listener.Listen();
        Task<FrameChannel> connect = TcpTransport.ConnectAsync("127.0.0.1", ((System.Net.IPEndPoint)listener.LocalEndPoint!).Port);
        using RawPeer raw = RawPeer.Wrap(await listener.AcceptAsync());
        await raw.SendAsync(RawPeer.Preamble(version: 2));

        var error = await Assert.ThrowsAsync<XCallProtocolException>(() => connect.WaitAsync(Timeouts.Long));
        Assert.Contains("version 2", error.Message);
    }

    [Theory]
    [InlineData("length beyond MaxFrameSize")]
    [InlineData("negative length")]
    [InlineData("bad frame version")]
    [InlineData("kind zero")]
    [InlineData("CallerWaits flag")]
    [InlineData("garbage header")]
    public async Task Malformed_frame_closes_that_connection_only(string defect)
    {
        using var server = new EchoServer(Options);
        using FrameChannel good = await ConnectGoodClientAsync(server);
        await server.NextAcceptedAsync();

        using RawPeer raw = await RawPeer.ConnectAsync(server.Port);
        await raw.HandshakeAsync();
        EchoHandler victim = await server.NextAcceptedAsync();
        byte[] bad = defect switch
        {
            "length beyond MaxFrameSize" => RawPeer.Prefix(Options.MaxFrameSize + 1, FrameKind.Call, 1),
            "negative length" => RawPeer.Prefix(-5, FrameKind.Call, 1),
            "bad frame version" => RawPeer.Prefix(4, FrameKind.Call, 1, version: 77),
            "kind zero" => RawPeer.Prefix(4, 0, 1),
            "CallerWaits flag" => [.. RawPeer.Prefix(4, FrameKind.Call, 1, flags: FrameFlags.CallerWaits), 1, 2, 3, 4], // a whole frame: nothing lends over tcp
            _ => Frames.Payload(28, seed: 5).Select(b => (byte)(b | 0x80)).ToArray(), // length negative, version >= 128
        };
        await raw.SendAsync(bad);

        Exception? error = await victim.Closed.WaitAsync(Timeouts.Long);
        Assert.IsType<XCallProtocolException>(error);
        Assert.True(await raw.WaitForCloseAsync());
        Assert.Equal(0, Interlocked.Read(ref victim.FramesReceived));
        await AssertStillServesAsync(server, good);
    }

    [Fact]
    public async Task Oversized_length_is_refused_before_the_payload_arrives()
    {
        // The length alone is enough: the channel must not wait for (or allocate) 2 GiB.
        using var server = new EchoServer(Options);
        using RawPeer raw = await RawPeer.ConnectAsync(server.Port);
        await raw.HandshakeAsync();
        EchoHandler victim = await server.NextAcceptedAsync();

        await raw.SendAsync(RawPeer.Prefix(int.MaxValue, FrameKind.Call, 1));

        var error = Assert.IsType<XCallProtocolException>(await victim.Closed.WaitAsync(Timeouts.Long));
        Assert.Contains("MaxFrameSize", error.Message);
    }

    [Fact]
    public async Task Frame_cut_short_by_the_peer_closing_reports_a_disconnect()
    {
        using var server = new EchoServer(Options);
        RawPeer raw = await RawPeer.ConnectAsync(server.Port);
        await raw.HandshakeAsync();
        EchoHandler victim = await server.NextAcceptedAsync();

        await raw.SendAsync([.. RawPeer.Prefix(100, FrameKind.Call, 1), .. new byte[10]]);
        raw.Dispose();

        Assert.IsType<XCallDisconnectedException>(await victim.Closed.WaitAsync(Timeouts.Long));
        Assert.Equal(0, Interlocked.Read(ref victim.FramesReceived));
    }

    [Fact]
    public async Task Protocol_error_raised_by_the_handler_closes_the_channel()
    {
        using var server = new EchoServer(Options);
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port, Options);
        var handler = new ThrowingHandler();
        channel.Start(handler);

        Frames.Send(channel, FrameKind.Call, 1, [1, 2, 3]); // the echo comes back and the handler throws

        var error = Assert.IsType<XCallProtocolException>(await handler.Closed.Task.WaitAsync(Timeouts.Long));
        Assert.Equal("bad payload", error.Message);
    }

    [Fact]
    public async Task Ping_and_pong_are_answered_inside_the_channel_and_never_reach_the_handler()
    {
        using var server = new EchoServer(Options);
        using RawPeer raw = await RawPeer.ConnectAsync(server.Port);
        await raw.HandshakeAsync();
        EchoHandler handler = await server.NextAcceptedAsync();

        await raw.SendAsync(RawPeer.Prefix(0, FrameKind.Ping, 77));
        await raw.SendAsync(RawPeer.Prefix(0, FrameKind.Pong, 78));
        (FrameKind kind, ulong callId, byte[] payload) = await raw.ReadFrameAsync();
        while (kind == FrameKind.Ping)
        {
            (kind, callId, payload) = await raw.ReadFrameAsync(); // the server's own heartbeat may come first
        }

        Assert.Equal(FrameKind.Pong, kind);
        Assert.Equal(77UL, callId);
        Assert.Empty(payload);
        Assert.Equal(0, Interlocked.Read(ref handler.FramesReceived));
    }

    private static async Task<FrameChannel> ConnectGoodClientAsync(EchoServer server)
    {
        FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port, Options);
        var replies = new ReplyCollector();
        channel.Start(replies);
        GoodClients.Add(channel, replies);
        await Frames.CallAsync(channel, replies, 1, [1]);
        return channel;
    }

    private static readonly System.Runtime.CompilerServices.ConditionalWeakTable<FrameChannel, ReplyCollector> GoodClients = [];

    private static async Task AssertStillServesAsync(EchoServer server, FrameChannel good)
    {
        ReplyCollector replies = GoodClients.GetValue(good, _ => throw new InvalidOperationException());
        byte[] payload = Frames.Payload(5000, seed: 11);
        Assert.Equal(payload, await Frames.CallAsync(good, replies, 99, payload));

        // And a new client is still accepted.
        using FrameChannel fresh = await TcpTransport.ConnectAsync("127.0.0.1", server.Port, Options);
        var freshReplies = new ReplyCollector();
        fresh.Start(freshReplies);
        Assert.Equal(payload, await Frames.CallAsync(fresh, freshReplies, 1, payload));
    }

    private sealed class ThrowingHandler : IFrameHandler
    {
        public TaskCompletionSource<Exception?> Closed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload) => throw new XCallProtocolException("bad payload");

        public void OnClosed(Exception? error) => Closed.TrySetResult(error);
    }
}
