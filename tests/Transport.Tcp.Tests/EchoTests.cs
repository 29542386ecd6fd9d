using System.Net;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

public sealed class EchoTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData(0)]
    [InlineData(4)]
    [InlineData(1000)]
    [InlineData(1024 * 1024)]
    [InlineData(10 * 1024 * 1024)]
    public async Task Echo_round_trips_payloads_of_every_size(int size)
    {
        using var server = new EchoServer();
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port);
        var replies = new ReplyCollector();
        channel.Start(replies);

        for (int i = 1; i <= 3; i++)
        {
            byte[] payload = Frames.Payload(size, seed: size + i);
            byte[] reply = await Frames.CallAsync(channel, replies, (ulong)i, payload);
            Assert.Equal(payload.Length, reply.Length);
            Assert.True(payload.AsSpan().SequenceEqual(reply), $"reply {i} of {size} bytes differs");
        }
    }

    [Fact]
    public async Task Concurrent_callers_each_get_their_own_replies()
    {
        const int Senders = 64;
        const int FramesEach = 1000;
        using var server = new EchoServer();
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port);
        var replies = new ReplyCollector();
        channel.Start(replies);

        var senders = new Task[Senders];
        for (int s = 0; s < Senders; s++)
        {
            int sender = s;
            senders[s] = Task.Run(async () =>
            {
                for (int i = 0; i < FramesEach; i++)
                {
                    ulong callId = ((ulong)sender << 32) | (uint)i;
                    byte[] payload = BitConverter.GetBytes(callId).Concat(Frames.Payload(i % 97, seed: (int)callId)).ToArray();
                    byte[] reply = await Frames.CallAsync(channel, replies, callId, payload);
                    Assert.True(payload.AsSpan().SequenceEqual(reply), $"reply to call {sender}/{i} differs");
                }
            });
        }
        await Task.WhenAll(senders).WaitAsync(TimeSpan.FromSeconds(60));
        EchoHandler serverSide = await server.NextAcceptedAsync();
        Assert.Equal(Senders * FramesEach, Interlocked.Read(ref serverSide.FramesReceived));
    }

    [Fact]
    public async Task Pipelined_frames_are_answered_in_order()
    {
        const int Count = 20_000;
        using var server = new EchoServer();
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port);
        var replies = new ReplyCollector { RecordOrder = true };
        channel.Start(replies);

        var pending = new Task<byte[]>[Count];
        for (int i = 0; i < Count; i++)
        {
            pending[i] = replies.Reply((ulong)i + 1);
        }
        // Several threads send without waiting: frames committed during a flush go out in the next batch.
        var batches = Enumerable.Range(0, 4).Select(t => Task.Factory.StartNew(() =>
        {
            for (int i = t; i < Count; i += 4)
            {
                Frames.Send(channel, FrameKind.Call, (ulong)i + 1, Frames.Payload(16, i));
            }
        }, TaskCreationOptions.LongRunning)).ToArray();
        await Task.WhenAll(batches);
        byte[][] results = await Task.WhenAll(pending).WaitAsync(Timeouts.Long);
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(Frames.Payload(16, i), results[i]);
        }
        // The server answers in arrival order, so replies come back in the order the calls went out;
        // each sender's own calls must keep their relative order.
        IReadOnlyList<ulong> order = replies.Order;
        Assert.Equal(Count, order.Count);
        for (int t = 0; t < 4; t++)
        {
            ulong[] mine = order.Where(id => (int)(id - 1) % 4 == t).ToArray();
            Assert.Equal(mine.Order().ToArray(), mine);
        }
    }

    [Fact]
    public async Task Batched_commits_from_one_thread_go_out_in_order_and_in_fewer_writes()
    {
        const int Count = 10_000;
        using var server = new EchoServer();
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port);
        var replies = new ReplyCollector { RecordOrder = true };
        channel.Start(replies);

        // A lone batched frame leaves without anything committed after it.
        Task<byte[]> lone = replies.Reply(Count + 1);
        Frames.Send(channel, FrameKind.Call, Count + 1, [42], batched: true);
        Assert.Equal([42], await lone.WaitAsync(Timeouts.Long));

        var sends = (TcpFrameChannel)channel;
        long writesBefore = sends.SendCount;
        var pending = new Task<byte[]>[Count];
        byte[][] payloads = new byte[Count][];
        for (int i = 0; i < Count; i++)
        {
            pending[i] = replies.Reply((ulong)i + 1);
            payloads[i] = Frames.Payload(16, i);
        }
        for (int i = 0; i < Count; i++)
        {
            Frames.Send(channel, FrameKind.Call, (ulong)i + 1, payloads[i], batched: true);
        }
        byte[][] results = await Task.WhenAll(pending).WaitAsync(Timeouts.Long);
        long writes = sends.SendCount - writesBefore;
        output.WriteLine($"{Count} batched frames went out in {writes} writes");
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(payloads[i], results[i]);
        }
        Assert.Equal([.. Enumerable.Range(1, Count).Select(i => (ulong)i)], replies.Order.Skip(1));
        Assert.InRange(writes, 1, Count / 2);
    }

    [Fact]
    public async Task Replies_to_frames_that_arrive_together_leave_in_one_write()
    {
        const int Calls = 8;
        using var server = new EchoServer();
        using RawPeer raw = await RawPeer.ConnectAsync(server.Port);
        await raw.HandshakeAsync();
        var serverChannel = (TcpFrameChannel)(await server.NextAcceptedAsync()).Channel;
        long writesBefore = serverChannel.SendCount;

        var together = new List<byte>();
        for (int i = 1; i <= Calls; i++)
        {
            together.AddRange(RawPeer.Prefix(16, FrameKind.Call, (ulong)i));
            together.AddRange(Frames.Payload(16, i));
        }
        // Last, a frame without a reply of its own: the replies held for it must leave all the same.
        together.AddRange(RawPeer.Prefix(4, FrameKind.OneWay, 0));
        together.AddRange(Frames.Payload(4, 0));
        await raw.SendAsync([.. together]);
        for (int i = 1; i <= Calls; i++)
        {
            (FrameKind kind, ulong callId, byte[] payload) = await raw.ReadFrameAsync().WaitAsync(Timeouts.Long);
            Assert.Equal((FrameKind.Reply, (ulong)i), (kind, callId));
            Assert.Equal(Frames.Payload(16, i), payload);
        }

        Assert.Equal(writesBefore + 1, serverChannel.SendCount);

        // A lone call afterwards is answered at once, in a write of its own.
        await raw.SendAsync([.. RawPeer.Prefix(1, FrameKind.Call, 99), 7]);
        (FrameKind loneKind, ulong loneId, byte[] lonePayload) = await raw.ReadFrameAsync().WaitAsync(Timeouts.Long);
        Assert.Equal((FrameKind.Reply, 99UL), (loneKind, loneId));
        Assert.Equal([7], lonePayload);
        Assert.Equal(writesBefore + 2, serverChannel.SendCount);
    }

    [Fact]
    public async Task Remote_endpoint_names_the_peer_as_tcp_uri()
    {
        using var server = new EchoServer();
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port);
        Assert.Equal($"tcp://127.0.0.1:{server.Port}", channel.RemoteEndpoint);
        using FrameChannel byName = TcpTransport.Connect("localhost", server.Port);
        Assert.Equal($"tcp://localhost:{server.Port}", byName.RemoteEndpoint);
        Assert.Equal(IPAddress.Loopback, server.Listener.LocalEndpoint.Address);
        Assert.NotEqual(0, server.Listener.LocalEndpoint.Port);
    }

    [Fact]
    public async Task Dispose_reports_an_orderly_close_exactly_once_on_both_sides()
    {
        using var server = new EchoServer();
        FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port);
        var replies = new ReplyCollector();
        channel.Start(replies);
        await Frames.CallAsync(channel, replies, 1, [1, 2, 3]);
        EchoHandler serverSide = await server.NextAcceptedAsync();

        channel.Dispose();
        channel.Dispose();

        Assert.Null(await replies.Closed.WaitAsync(Timeouts.Long));
        Assert.Null(await serverSide.Closed.WaitAsync(Timeouts.Long)); // the goodbye frame made it orderly
        Assert.Equal(1, replies.CloseCount);
        Assert.Equal(1, serverSide.CloseCount);
        Assert.Throws<XCallDisconnectedException>(() => channel.BeginFrame(new FrameHeader(FrameKind.Call, 2, 0, 7)));
    }

    [Fact]
    public async Task Peer_disappearing_fails_the_other_side_at_once()
    {
        var options = new TcpOptions { HeartbeatTimeout = Timeout.InfiniteTimeSpan }; // only the socket can tell
        using var server = new EchoServer(options);
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port, options);
        var replies = new ReplyCollector();
        channel.Start(replies);
        await Frames.CallAsync(channel, replies, 1, [1]);
        Task<byte[]> never = replies.Reply(2);

        server.Dispose(); // closes the accepted channel: FIN after a goodbye

        Exception? closed = await replies.Closed.WaitAsync(Timeouts.Long);
        Assert.Null(closed);
        await Assert.ThrowsAsync<XCallDisconnectedException>(() => never.WaitAsync(Timeouts.Long));
        Assert.Throws<XCallDisconnectedException>(() => channel.BeginFrame(new FrameHeader(FrameKind.Call, 3, 0, 7)));
    }

    [Fact]
    public async Task Outgoing_frame_beyond_max_frame_size_is_refused_and_the_channel_goes_on()
    {
        var options = new TcpOptions { MaxFrameSize = 1024 };
        using var server = new EchoServer(options);
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port, options);
        var replies = new ReplyCollector();
        channel.Start(replies);

        Assert.Throws<InvalidOperationException>(() => Frames.Send(channel, FrameKind.Call, 1, new byte[1025]));

        byte[] reply = await Frames.CallAsync(channel, replies, 2, new byte[1024]);
        Assert.Equal(1024, reply.Length);
    }

    [Fact]
    public async Task Aborted_frame_is_never_sent()
    {
        using var server = new EchoServer();
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", server.Port);
        var replies = new ReplyCollector { RecordOrder = true };
        channel.Start(replies);

        IBufferWriter<byte> output = channel.BeginFrame(new FrameHeader(FrameKind.Call, 1, 0, 7));
        output.GetSpan(100_000).Fill(0xAA);
        output.Advance(100_000);
        channel.AbortFrame();
        await Frames.CallAsync(channel, replies, 2, [9]);

        Assert.Equal([2UL], replies.Order);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Slow_reader_blocks_the_sender_instead_of_buffering_without_bound(bool batched)
    {
        var options = new TcpOptions { SendBufferSize = 64 * 1024, ReceiveBufferSize = 64 * 1024 };
        using var listener = TcpTransport.Listen(new IPEndPoint(IPAddress.Loopback, 0), options);
        using FrameChannel client = await TcpTransport.ConnectAsync("127.0.0.1", listener.LocalEndpoint.Port, options);
        using FrameChannel server = await listener.AcceptAsync(); // not started: nobody reads
        client.Start(new ReplyCollector());

        const int Frames64K = 256; // 16 MiB in all, far beyond the socket buffers and the send high-water mark
        long sent = 0;
        Task sender = Task.Factory.StartNew(() =>
        {
            byte[] chunk = new byte[64 * 1024];
            for (int i = 0; i < Frames64K; i++)
            {
                Frames.Send(client, FrameKind.OneWay, 0, chunk, batched: batched);
                Interlocked.Increment(ref sent);
            }
        }, TaskCreationOptions.LongRunning);

        // Nothing to await: the point is that the sender makes no progress while time passes.
        Assert.NotSame(sender, await Task.WhenAny(sender, Task.Delay(500)));
        output.WriteLine($"frames committed while the reader slept: {Interlocked.Read(ref sent)} of {Frames64K}");
        Assert.True(Interlocked.Read(ref sent) < Frames64K / 2);

        var reader = new EchoHandler(server);
        server.Start(reader);
        await sender.WaitAsync(Timeouts.Long);
        Assert.Equal(Frames64K, Interlocked.Read(ref sent));
    }
}
