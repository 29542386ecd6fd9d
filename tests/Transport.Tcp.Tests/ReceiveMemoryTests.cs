using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

/// <summary>The receiver's memory follows the bytes a peer really sent, not the length it announced.</summary>
/// <remarks>Alone in its collection: <see cref="GC.GetTotalAllocatedBytes"/> counts what every thread of the process allocates.</remarks>
[Collection(nameof(ReceiveMemoryTests))]
public sealed class ReceiveMemoryTests
{
    private const int ReceiveBufferSize = 64 * 1024;

    [Fact]
    public async Task A_frame_header_alone_does_not_make_the_server_allocate_the_payload()
    {
        using var server = new EchoServer(TcpOptions.Default);
        var peers = new List<RawPeer>();
        var channels = new List<TcpFrameChannel>();
        try
        {
            for (int i = 0; i < 4; i++)
            {
                RawPeer peer = await RawPeer.ConnectAsync(server.Port);
                peers.Add(peer);
                await peer.HandshakeAsync();
                channels.Add((TcpFrameChannel)(await server.NextAcceptedAsync()).Channel);
            }
            long before = GC.GetTotalAllocatedBytes(precise: true);

            foreach (RawPeer peer in peers)
            {
                await peer.SendAsync(RawPeer.Prefix(TcpOptions.Default.MaxFrameSize, FrameKind.Call, 1));
            }
            foreach (TcpFrameChannel channel in channels)
            {
                await WaitUntilBufferedAsync(channel, FrameCodec.PrefixSize);
            }

            long allocated = GC.GetTotalAllocatedBytes(precise: true) - before;
            Assert.True(allocated < 16L << 20, $"four 28-byte headers made the process allocate {allocated:N0} bytes");
            Assert.All(channels, channel => Assert.Equal(ReceiveBufferSize, channel.ReceiveBufferLength));
        }
        finally
        {
            peers.ForEach(peer => peer.Dispose());
        }
    }

    [Fact]
    public async Task The_receive_buffer_grows_with_the_bytes_that_arrive_and_the_frame_still_arrives_whole()
    {
        const int Size = 16 << 20;
        const int FirstPart = 1 << 20;
        using var server = new EchoServer(TcpOptions.Default);
        using RawPeer peer = await RawPeer.ConnectAsync(server.Port);
        await peer.HandshakeAsync();
        var channel = (TcpFrameChannel)(await server.NextAcceptedAsync()).Channel;
        byte[] payload = Frames.Payload(Size, seed: 3);

        await peer.SendAsync([.. RawPeer.Prefix(Size, FrameKind.Call, 1), .. payload.AsSpan(0, FirstPart)]);
        int buffered = FrameCodec.PrefixSize + FirstPart;
        await WaitUntilBufferedAsync(channel, buffered);
        // At most twice what arrived, rounded up to the pool's next power of two.
        Assert.InRange(channel.ReceiveBufferLength, buffered, 4 * buffered);

        await peer.SendAsync(payload[FirstPart..]);
        (FrameKind kind, ulong callId, byte[] echoed) = await peer.ReadFrameAsync().WaitAsync(Timeouts.Long);
        while (kind == FrameKind.Ping)
        {
            // The server's heartbeat: a 16 MiB frame can take longer than its idle interval on a loaded machine.
            (kind, callId, echoed) = await peer.ReadFrameAsync().WaitAsync(Timeouts.Long);
        }
        Assert.Equal((FrameKind.Reply, 1UL), (kind, callId));
        Assert.True(payload.AsSpan().SequenceEqual(echoed), "the echoed payload differs");
    }

    /// <summary>Waits until the server holds <paramref name="bytes"/> bytes of an incomplete frame and is waiting for more:
    /// it has done with them whatever it does.</summary>
    private static async Task WaitUntilBufferedAsync(TcpFrameChannel channel, int bytes)
    {
        // ReceiveCount before IsWaitingForBytes: a wait that began after the last counted receive was dispatched.
        bool done = await Task.Run(() => SpinWait.SpinUntil(
            () => channel.ReceiveCount > 0 && channel.IsWaitingForBytes && channel.BufferedBytes == bytes, Timeouts.Long));
        Assert.True(done, $"the server holds {channel.BufferedBytes} bytes, not {bytes}");
    }
}

/// <summary>Runs <see cref="ReceiveMemoryTests"/> while no other test runs.</summary>
[CollectionDefinition(nameof(ReceiveMemoryTests), DisableParallelization = true)]
public sealed class ReceiveMemoryCollection;
