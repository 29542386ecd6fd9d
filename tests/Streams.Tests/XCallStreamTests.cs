using System.Buffers;
using System.Buffers.Binary;
using System.Security.Cryptography;
using XCall.Marshal;
using XCall.Transport;
using XCall.Transport.Shm;

namespace XCall.Streams.Tests;

public sealed class XCallStreamTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(30);

    public static TheoryData<string> Transports => ["shm", "tcp"];

    internal static string NewAddress(string transport) => transport == "shm"
        ? $"shm://streams-{Guid.NewGuid():N}"
        : "tcp://127.0.0.1:0";

    internal static async Task<StreamPair> PairAsync(string transport, XCallStreamOptions? options = null)
    {
        XCallStreamListener listener = XCallStreams.Listen(NewAddress(transport), options);
        ValueTask<XCallStream> accepted = listener.AcceptAsync();
        XCallStream client = await XCallStreams.ConnectAsync(listener.Address.ToString(), options);
        return new StreamPair(listener, client, await accepted);
    }

    /// <summary>A listener and the two ends of one stream it accepted.</summary>
    internal sealed record StreamPair(XCallStreamListener Listener, XCallStream Client, XCallStream Server) : IDisposable
    {
        public void Dispose()
        {
            Client.Dispose();
            Server.Dispose();
            Listener.Dispose();
        }
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task Bytes_arrive_in_order_both_ways_across_many_frames(string transport)
    {
        using StreamPair pair = await PairAsync(transport);
        (XCallStream client, XCallStream server) = (pair.Client, pair.Server);
        byte[] up = RandomNumberGenerator.GetBytes(3 * 1024 * 1024 + 17); // many 64 KiB frames, beyond the 1 MiB window
        byte[] down = RandomNumberGenerator.GetBytes(200_001);
        Task writeUp = Task.Run(async () =>
        {
            // Uneven writes, so frames and reads do not line up.
            for (int offset = 0; offset < up.Length; offset += 50_000)
            {
                await client.WriteAsync(up.AsMemory(offset, Math.Min(50_000, up.Length - offset)));
            }
            client.CompleteWrites();
        });
        Task writeDown = Task.Run(() =>
        {
            server.Write(down); // the synchronous path
            server.CompleteWrites();
        });
        byte[] gotUp = await ReadToEndAsync(server);
        byte[] gotDown = await ReadToEndAsync(client);
        await Task.WhenAll(writeUp, writeDown);
        Assert.Equal(up, gotUp);
        Assert.Equal(down, gotDown);
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task A_writer_gets_no_further_than_a_receive_window_ahead_of_the_reader(string transport)
    {
        var options = new XCallStreamOptions { ReceiveWindow = 64 * 1024 };
        using StreamPair pair = await PairAsync(transport, options);
        (XCallStream client, XCallStream server) = (pair.Client, pair.Server);
        const int Chunk = 4096;
        const int Total = 2 * 1024 * 1024;
        long written = 0;
        Task writer = Task.Run(async () =>
        {
            byte[] block = new byte[Chunk];
            for (int i = 0; i < Total / Chunk; i++)
            {
                BinaryPrimitives.WriteInt32LittleEndian(block, i);
                await client.WriteAsync(block);
                Interlocked.Add(ref written, Chunk);
            }
        });
        byte[] buffer = new byte[Chunk];
        long consumed = 0;
        while (consumed < Total)
        {
            await server.ReadExactlyAsync(buffer);
            Assert.Equal((int)(consumed / Chunk), BinaryPrimitives.ReadInt32LittleEndian(buffer));
            consumed += Chunk;
            // The writer had credit for the window plus what this reader consumed so far, never more.
            long ahead = Interlocked.Read(ref written) - consumed;
            Assert.True(ahead <= options.ReceiveWindow, $"the writer is {ahead} bytes ahead of the reader, past the {options.ReceiveWindow}-byte window");
        }
        await writer;
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task CompleteWrites_ends_the_peers_reads_and_this_side_still_reads_the_answer(string transport)
    {
        using StreamPair pair = await PairAsync(transport);
        (XCallStream client, XCallStream server) = (pair.Client, pair.Server);
        await client.WriteAsync("question"u8.ToArray());
        client.CompleteWrites();
        Assert.Throws<InvalidOperationException>(() => client.Write([1]));
        using (server)
        {
            byte[] question = await ReadToEndAsync(server); // ends because of the half-close alone
            Assert.Equal("question"u8.ToArray(), question);
            await server.WriteAsync("answer to "u8.ToArray().Concat(question).ToArray());
        }
        Assert.Equal("answer to question"u8.ToArray(), await ReadToEndAsync(client));
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task A_peer_that_closes_reads_as_end_of_stream_and_writes_then_fail(string transport)
    {
        using StreamPair pair = await PairAsync(transport);
        (XCallStream client, XCallStream server) = (pair.Client, pair.Server);
        await server.WriteAsync(new byte[] { 1, 2, 3 });
        server.Dispose();
        Assert.Equal(new byte[] { 1, 2, 3 }, await ReadToEndAsync(client));
        await Assert.ThrowsAsync<IOException>(async () => await client.WriteAsync(new byte[10]));
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task A_waiting_reader_resumes_on_the_receiving_thread_not_the_thread_pool(string transport)
    {
        using StreamPair pair = await PairAsync(transport);
        (XCallStream client, XCallStream server) = (pair.Client, pair.Server);
        var resumedOn = new TaskCompletionSource<(int Count, bool OnPool)>(TaskCreationOptions.RunContinuationsAsynchronously);
        byte[] buffer = new byte[16];
        ValueTask<int> read = server.ReadAsync(buffer); // nothing sent yet: the read waits
        Assert.False(read.IsCompleted, "the read completed before anything was written");
        Task resumed = ResumeAsync(read, resumedOn);
        await client.WriteAsync("hello"u8.ToArray());
        (int count, bool onPool) = await resumedOn.Task.WaitAsync(s_wait);
        await resumed;
        Assert.Equal(5, count);
        Assert.Equal("hello"u8.ToArray(), buffer[..count]);
        Assert.False(onPool, "the reader resumed on a thread-pool thread: the frame's bytes took a hop through the pool");

        static async Task ResumeAsync(ValueTask<int> read, TaskCompletionSource<(int, bool)> resumedOn)
        {
            int n = await read.ConfigureAwait(false);
            resumedOn.SetResult((n, Thread.CurrentThread.IsThreadPoolThread));
        }
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task A_resumed_reader_that_blocks_on_the_peer_does_not_stall_the_stream(string transport)
    {
        // The reader resumes on the thread that receives the connection's frames, then blocks in a synchronous
        // write that needs credit only those frames bring: the connection hands its receiving to another thread.
        var options = new XCallStreamOptions { ReceiveWindow = XCallStreamOptions.MinReceiveWindow };
        using StreamPair pair = await PairAsync(transport, options);
        (XCallStream client, XCallStream server) = (pair.Client, pair.Server);
        byte[] reply = RandomNumberGenerator.GetBytes(64 * XCallStreamOptions.MinReceiveWindow);
        Task echo = AnswerAsync(server, reply);
        await client.WriteAsync(new byte[] { 7 });
        byte[] got = new byte[reply.Length];
        await client.ReadExactlyAsync(got).AsTask().WaitAsync(s_wait);
        await echo.WaitAsync(s_wait);
        Assert.Equal(reply, got);

        static async Task AnswerAsync(XCallStream server, byte[] reply)
        {
            byte[] one = new byte[1];
            Assert.Equal(1, await server.ReadAsync(one).ConfigureAwait(false));
            server.Write(reply); // 64 windows: waits for credit many times over
        }
    }

    [Fact]
    public async Task A_malformed_frame_closes_that_stream_and_the_listener_serves_the_next_peer()
    {
        string address = NewAddress("shm");
        using XCallStreamListener listener = XCallStreams.Listen(address);
        ValueTask<XCallStream> accepted = listener.AcceptAsync();
        // A raw connection that speaks frames, not the stream protocol: a data frame nobody granted credit for.
        using FrameChannel raw = await ShmTransport.ConnectAsync(listener.Address.Name);
        raw.Start(new IgnoreFrames());
        IBufferWriter<byte> output = raw.BeginFrame(new FrameHeader(FrameKind.OneWay, 0, 0, 99));
        output.Write(new byte[16]);
        raw.CommitFrame();
        using (XCallStream victim = await accepted)
        {
            IOException error = await Assert.ThrowsAsync<IOException>(async () => await victim.ReadExactlyAsync(new byte[1]));
            Assert.IsType<XCallProtocolException>(error.InnerException);
            Assert.Contains("Unknown byte-stream frame 99", error.Message, StringComparison.Ordinal);
        }

        ValueTask<XCallStream> next = listener.AcceptAsync();
        using XCallStream client = await XCallStreams.ConnectAsync(address);
        using XCallStream server = await next;
        await client.WriteAsync("still serving"u8.ToArray());
        client.CompleteWrites();
        Assert.Equal("still serving"u8.ToArray(), await ReadToEndAsync(server));
    }

    [Fact]
    public async Task Domain_addresses_and_bad_windows_are_refused_with_clear_errors()
    {
        ArgumentException scheme = await Assert.ThrowsAsync<ArgumentException>(() => XCallStreams.ConnectAsync("domain://calc"));
        Assert.Contains("shm:// and tcp://", scheme.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentOutOfRangeException>(() => XCallStreams.Listen("shm://x", new XCallStreamOptions { ReceiveWindow = 100 }));
        Assert.Throws<FormatException>(() => XCallStreams.ConnectCallback("nonsense"));
    }

    [Fact]
    public async Task A_stream_whose_channel_closed_before_its_first_grant_reports_the_close_on_read_and_write()
    {
        // The race the listener's accept meets when a peer's first frame is malformed: the receive thread closes the
        // channel before the constructor sends its grant. Here the channel closes inside Start, every time.
        var error = new XCallProtocolException("Unknown byte-stream frame 99.");
        using var stream = new XCallStream(new ClosedOnStart(error), 64 * 1024);
        IOException read = await Assert.ThrowsAsync<IOException>(async () => await stream.ReadExactlyAsync(new byte[1]));
        Assert.Same(error, read.InnerException);
        Assert.Throws<IOException>(() => stream.Write(new byte[1]));
    }

    /// <summary>A channel that closes (telling its handler) as it starts; every frame after that is refused, as a stopped one's.</summary>
    private sealed class ClosedOnStart(Exception error) : FrameChannel
    {
        public override string RemoteEndpoint => "shm://closed-on-start";

        public override void Start(IFrameHandler handler) => handler.OnClosed(error);

        public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline) =>
            throw new XCallDisconnectedException(RemoteEndpoint, "the channel is closed", error);

        public override void CommitFrame() => throw new InvalidOperationException("No frame is open.");

        public override void AbortFrame() => throw new InvalidOperationException("No frame is open.");

        public override void Dispose()
        {
        }
    }

    private sealed class IgnoreFrames : IFrameHandler
    {
        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
        }

        public void OnClosed(Exception? error)
        {
        }
    }

    internal static async Task<byte[]> ReadToEndAsync(Stream stream)
    {
        using var all = new MemoryStream();
        await stream.CopyToAsync(all);
        return all.ToArray();
    }
}
