using System.Buffers;
using System.Runtime.InteropServices;
using XCall.Marshal;
using XCall.Runtime.CompilerServices;
using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Transport;

namespace XCall.FastProxy.Tests;

/// <summary>What callers see when the connection or the peer misbehaves.</summary>
public sealed class ConnectionFailureTests
{
    private static (XCallConnection Client, XCallConnection Server, InMemoryChannel ClientChannel) Connect(ConnectionOptions? clientOptions = null)
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        var server = new XCallConnection(serverChannel);
        server.ExposeRoot(new Shapes(), ContractRegistry.Get<IShapes>().Dispatcher);
        server.Start();
        var client = new XCallConnection(clientChannel, clientOptions);
        client.Start();
        return (client, server, clientChannel);
    }

    [Fact]
    public async Task Pending_call_fails_with_disconnected_when_the_peer_closes()
    {
        (XCallConnection client, XCallConnection server, _) = Connect();
        IShapes shapes = client.GetProxy<IShapes>();
        Task call = shapes.DelayAsync(600_000, CancellationToken.None);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (await Shapes.Started.Reader.ReadAsync(timeout.Token) != nameof(IShapes.DelayAsync))
        {
        }
        server.Dispose();
        var ex = await Assert.ThrowsAsync<XCallDisconnectedException>(() => call);
        Assert.Equal("mem://test/server", ex.Endpoint);
        var later = Assert.Throws<XCallDisconnectedException>(() => shapes.Add(1, 2));
        var laterAsync = await Assert.ThrowsAsync<XCallDisconnectedException>(() => shapes.DelayAsync(1, CancellationToken.None));
        foreach (XCallDisconnectedException failure in new[] { ex, later, laterAsync })
        {
            // The endpoint and the reason once each: "Connection to mem://test/server lost: the peer closed the connection".
            Assert.Equal(1, failure.Message.Split("Connection to").Length - 1);
            Assert.Contains("the peer closed the connection", failure.Message);
        }
        client.Dispose();
    }

    [Fact]
    public async Task Calls_failed_by_one_close_each_throw_their_own_exception_object()
    {
        (XCallConnection client, XCallConnection server, _) = Connect();
        IShapes shapes = client.GetProxy<IShapes>();
        Task first = shapes.DelayAsync(600_000, CancellationToken.None);
        Task second = shapes.DelayAsync(600_000, CancellationToken.None);
        Assert.False(first.IsCompleted || second.IsCompleted);
        server.Dispose(); // both pending (sent or not): the close fails both
        var a = await Assert.ThrowsAsync<XCallDisconnectedException>(() => first);
        var b = await Assert.ThrowsAsync<XCallDisconnectedException>(() => second);
        // One instance rethrown by every failed caller (each on its own thread) would get its stack trace overwritten by each.
        Assert.NotSame(a, b);
        Assert.Equal(a.Message, b.Message);
        Assert.Equal(a.Endpoint, b.Endpoint);
        client.Dispose();
    }

    [Fact]
    public async Task Call_times_out_and_the_connection_stays_usable()
    {
        (XCallConnection client, XCallConnection server, _) = Connect(new ConnectionOptions { CallTimeout = TimeSpan.FromSeconds(2) });
        IShapes shapes = client.GetProxy<IShapes>();
        var ex = await Assert.ThrowsAsync<XCallTimeoutException>(() => Task.Run(() => shapes.WaitForCancel(CancellationToken.None)));
        Assert.Contains("2000 ms", ex.Message);
        // The connection stays usable after a timeout.
        Assert.Equal(3, shapes.Add(1, 2));
        await Assert.ThrowsAsync<XCallTimeoutException>(() => shapes.DelayAsync(600_000, CancellationToken.None));
        Assert.Equal(5, shapes.Add(2, 3));
        client.Dispose();
        server.Dispose();
    }

    [Fact]
    public void Unknown_method_id_is_reported_as_a_remote_error()
    {
        (XCallConnection client, XCallConnection server, _) = Connect();
        PendingCall call = client.BeginCall(0, 0xdeadbeef, isAsync: false);
        MarshalWriter arguments = call.Arguments();
        call.SendAndWait(ref arguments);
        var ex = Assert.Throws<RemoteInvocationException>(() => call.GetReplyReader());
        call.End();
        Assert.Equal("XCall.XCallException", ex.RemoteTypeName);
        Assert.Contains("0xdeadbeef", ex.RemoteMessage);
        Assert.Contains("XCall.Tests.Contracts.IShapes", ex.RemoteMessage);
        client.Dispose();
        server.Dispose();
    }

    [Fact]
    public void Malformed_frame_closes_that_connection_only()
    {
        (XCallConnection client, XCallConnection server, InMemoryChannel clientChannel) = Connect();
        (XCallConnection otherClient, XCallConnection otherServer, _) = Connect();
        var closed = new TaskCompletionSource<Exception?>();
        server.Closed += (_, error) => closed.TrySetResult(error);

        // A call frame for IShapes.Add whose payload is truncated: 2 bytes instead of two ints.
        var header = new FrameHeader(FrameKind.Call, 99, 0, MethodIdOfAdd(client));
        byte[] frame = new byte[FrameHeader.Size + 2];
        MemoryMarshal.Write(frame, in header);
        clientChannel.InjectRaw(frame);

        Assert.True(closed.Task.Wait(TimeSpan.FromSeconds(30)));
        Assert.IsType<XCallProtocolException>(closed.Task.Result);
        Assert.Equal(0, server.CallsInFlight); // the malformed call's slot went back before the connection closed
        Assert.Throws<XCallDisconnectedException>(() => client.GetProxy<IShapes>().Add(1, 2));
        Assert.Equal(7, otherClient.GetProxy<IShapes>().Add(3, 4));
        otherClient.Dispose();
        otherServer.Dispose();
    }

    [Theory]
    [InlineData(FrameKind.OneWay, nameof(IShapes.Ping))] // a method that answers, sent as one-way
    [InlineData(FrameKind.Call, nameof(IShapes.Post))]   // a [OneWay] method, sent as a call that asks for a reply
    public void A_frame_whose_kind_is_not_its_methods_closes_the_connection_before_the_target_runs(FrameKind kind, string method)
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        var shapes = new Shapes();
        using var server = new XCallConnection(serverChannel);
        server.ExposeRoot(shapes, ContractRegistry.Get<IShapes>().Dispatcher);
        var closed = new TaskCompletionSource<Exception?>();
        server.Closed += (_, error) => closed.TrySetResult(error);
        server.Start();
        clientChannel.Start(new RecordingHandler());

        uint methodId = MethodIdOf(method == nameof(IShapes.Ping) ? s => s.Ping() : s => s.Post("never run"));
        var header = new FrameHeader(kind, kind == FrameKind.Call ? 7UL : 0UL, 0, methodId);
        byte[] frame = new byte[FrameHeader.Size + (method == nameof(IShapes.Post) ? PostPayload.Length : 0)];
        MemoryMarshal.Write(frame, in header);
        if (method == nameof(IShapes.Post))
        {
            PostPayload.CopyTo(frame.AsSpan(FrameHeader.Size));
        }
        clientChannel.InjectRaw(frame);

        Assert.True(closed.Task.Wait(TimeSpan.FromSeconds(30)), "the server did not close the connection");
        var error = Assert.IsType<XCallProtocolException>(closed.Task.Result);
        Assert.Contains($"0x{methodId:x8}", error.Message);
        Assert.Contains(kind == FrameKind.OneWay ? "not [OneWay]" : "which is [OneWay]", error.Message);
        Assert.Equal(0, shapes.PingCount()); // Ping never ran; Post is checked before its target as Ping is
    }

    /// <summary>A string argument as the proxy writes it, for a hand-made frame of <see cref="IShapes.Post"/>.</summary>
    private static byte[] PostPayload
    {
        get
        {
            var buffer = new System.Buffers.ArrayBufferWriter<byte>();
            var writer = new MarshalWriter(buffer);
            writer.WriteString("never run");
            writer.Flush();
            return buffer.WrittenSpan.ToArray();
        }
    }

    [Fact]
    public void A_string_the_reader_would_refuse_fails_its_call_and_the_connection_serves_on()
    {
        var limits = new ConnectionOptions { Limits = new MarshalLimits { MaxStringLength = 1000 } };
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        using var server = new XCallConnection(serverChannel, limits);
        server.ExposeRoot(new Shapes(), ContractRegistry.Get<IShapes>().Dispatcher);
        server.Start();
        using var client = new XCallConnection(clientChannel, limits);
        client.Start();
        IShapes shapes = client.GetProxy<IShapes>();

        var refused = Assert.Throws<XCallException>(() => shapes.Echo(new string('x', 1001)));
        Assert.Contains("1001", refused.Message);
        Assert.Contains("MaxStringLength", refused.Message);
        Assert.Equal(new string('y', 1000), shapes.Echo(new string('y', 1000))); // the same connection, at the limit
        Assert.False(client.IsClosed);
        Assert.False(server.IsClosed);
    }

    [Fact]
    public void Frame_of_another_version_is_a_protocol_error()
    {
        (XCallConnection client, XCallConnection server, InMemoryChannel clientChannel) = Connect();
        var closed = new TaskCompletionSource<Exception?>();
        server.Closed += (_, error) => closed.TrySetResult(error);
        var header = new FrameHeader(FrameKind.Call, 1, 0, 1) { Version = 9 };
        byte[] frame = new byte[FrameHeader.Size];
        MemoryMarshal.Write(frame, in header);
        clientChannel.InjectRaw(frame);
        Assert.True(closed.Task.Wait(TimeSpan.FromSeconds(30)));
        Assert.Contains("version 9", Assert.IsType<XCallProtocolException>(closed.Task.Result).Message);
        client.Dispose();
    }

    [Theory]
    [InlineData(FrameKind.Call, 16)]
    [InlineData(FrameKind.Call, 0x8000)]
    [InlineData(FrameKind.OneWay, 1)]
    [InlineData(FrameKind.OneWay, 2)]
    [InlineData(FrameKind.OneWay, 4)]
    [InlineData(FrameKind.Reply, 4)]
    [InlineData(FrameKind.OneWay, 8)]
    [InlineData(FrameKind.Reply, 1)]
    public void Frame_flag_that_is_unknown_or_off_its_kind_is_a_protocol_error(FrameKind kind, int flags)
    {
        (XCallConnection client, XCallConnection server, InMemoryChannel clientChannel) = Connect();
        var closed = new TaskCompletionSource<Exception?>();
        server.Closed += (_, error) => closed.TrySetResult(error);
        var header = new FrameHeader(kind, 1, 0, 1, (ushort)flags);
        byte[] frame = new byte[FrameHeader.Size + sizeof(ulong)];
        MemoryMarshal.Write(frame, in header);
        clientChannel.InjectRaw(frame);
        Assert.True(closed.Task.Wait(TimeSpan.FromSeconds(30)));
        Assert.Contains($"flags 0x{flags:x4}", Assert.IsType<XCallProtocolException>(closed.Task.Result).Message);
        client.Dispose();
    }

    [Fact]
    public async Task Reply_with_bytes_to_a_void_call_is_a_protocol_error()
    {
        // A malformed reply ends its connection, as a malformed frame does on the receiving side.
        using (XCallConnection client = Answered(FrameKind.Reply, [1, 2, 3, 4]))
        {
            IShapes shapes = client.GetProxy<IShapes>();
            var ex = Assert.Throws<XCallProtocolException>(shapes.Ping);
            Assert.Contains("4", ex.Message);
            Assert.True(client.IsClosed);
            Assert.Throws<XCallDisconnectedException>(shapes.Ping);
        }
        using (XCallConnection client = Answered(FrameKind.Reply, [1, 2, 3, 4]))
        {
            await Assert.ThrowsAsync<XCallProtocolException>(() => client.GetProxy<IShapes>().PingAsync().AsTask());
            Assert.True(client.IsClosed);
        }
    }

    [Fact]
    public void Reply_whose_values_cannot_be_read_closes_the_connection()
    {
        using XCallConnection client = Answered(FrameKind.Reply, [0xE8, 3, 0, 0, 0x41, 0]); // a string of 1000 chars in 2 bytes
        Assert.Throws<XCallProtocolException>(() => client.GetProxy<IShapes>().Echo("x"));
        Assert.True(client.IsClosed);
    }

    [Fact]
    public void Error_record_followed_by_more_bytes_is_a_protocol_error()
    {
        var buffer = new System.Buffers.ArrayBufferWriter<byte>();
        var w = new MarshalWriter(buffer);
        w.Write((byte)1);
        w.WriteString("System.Exception");
        w.WriteString("boom");
        w.WriteString(null);
        w.Write(0);
        w.Write(0);
        w.Write(0xDEADBEEF);
        w.Flush();
        using XCallConnection client = Answered(FrameKind.Error, buffer.WrittenSpan.ToArray());
        Assert.Throws<XCallProtocolException>(() => client.GetProxy<IShapes>().Add(1, 2));
        Assert.True(client.IsClosed);
    }

    [Fact]
    public void A_malformed_reply_closes_the_channel_even_when_a_Closed_handler_throws()
    {
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair();
        s.Start(new ReplyingHandler(s, [1, 2, 3, 4]));
        using var client = new XCallConnection(c);
        client.Closed += (_, _) => throw new InvalidOperationException("a subscriber's bug");
        client.Start();

        Assert.Throws<XCallProtocolException>(client.GetProxy<IShapes>().Ping);

        Assert.True(client.IsClosed);
        Assert.Throws<XCallDisconnectedException>(() => c.BeginFrame(new FrameHeader(FrameKind.OneWay, 0, 0, 1))); // the channel is closed too
    }

    /// <summary>A client whose peer answers every call with a frame of <paramref name="kind"/> carrying <paramref name="payload"/>.</summary>
    private static XCallConnection Answered(FrameKind kind, byte[] payload)
    {
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair();
        s.Start(new ReplyingHandler(s, payload, kind));
        var client = new XCallConnection(c);
        client.Start();
        return client;
    }

    [Fact]
    public void Empty_reply_to_a_void_call_completes_it()
    {
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair();
        s.Start(new ReplyingHandler(s, payload: []));
        var client = new XCallConnection(c);
        client.Start();
        client.GetProxy<IShapes>().Ping();
        client.Dispose();
    }

    [Fact]
    public void Getting_a_contract_of_a_plain_interface_explains_the_fix()
    {
        var ex = Assert.Throws<InvalidOperationException>(() => ContractRegistry.Get<IDisposable>());
        Assert.Contains("[Remotable]", ex.Message);
    }

    /// <summary>The id the generated proxy uses for the method <paramref name="call"/> makes, from one real frame.</summary>
    private static uint MethodIdOf(Action<IShapes> call)
    {
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair();
        var recorder = new RecordingHandler();
        s.Start(recorder);
        var probe = new XCallConnection(c, new ConnectionOptions { CallTimeout = TimeSpan.FromMilliseconds(1) });
        probe.Start();
        try
        {
            call(probe.GetProxy<IShapes>());
        }
        catch (XCallTimeoutException)
        {
            // A call that asks for a reply gets none from the recorder.
        }
        probe.Dispose();
        return recorder.First.Task.Result;
    }

    private static uint MethodIdOfAdd(XCallConnection client) => MethodIdOf(s => s.Add(1, 2));

    /// <summary>A peer that answers every call with a reply carrying <paramref name="payload"/>.</summary>
    private sealed class ReplyingHandler(InMemoryChannel channel, byte[] payload, FrameKind kind = FrameKind.Reply) : IFrameHandler
    {
        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader _)
        {
            if (header.Kind == FrameKind.Call)
            {
                var output = channel.BeginFrame(new FrameHeader(kind, header.CallId, 0, header.MethodId));
                output.Write(payload);
                channel.CommitFrame();
            }
        }

        public void OnClosed(Exception? error)
        {
        }
    }

    private sealed class RecordingHandler : IFrameHandler
    {
        public TaskCompletionSource<uint> First { get; } = new();

        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            if (header.Kind is FrameKind.Call or FrameKind.OneWay)
            {
                First.TrySetResult(header.MethodId);
            }
        }

        public void OnClosed(Exception? error)
        {
        }
    }
}
