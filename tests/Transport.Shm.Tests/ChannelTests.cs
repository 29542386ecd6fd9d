using System.Buffers;
using System.Buffers.Binary;
using XCall.Runtime.CompilerServices;
using XCall.Runtime;
using XCall.Transport.Shm.Interop;
using XCall.Transport.Shm.Ring;
using XCall.Transport.Shm.TestHost;
using XCall.Transport.Shm.Tests.Support;

namespace XCall.Transport.Shm.Tests;

/// <summary>Both ends in this process: channel mechanics, files, permissions, errors.</summary>
[Collection(nameof(CoreDemandCollection))]
public sealed class ChannelTests(ITestOutputHelper output) : IDisposable
{
    private readonly TestDirectory _dir = new();

    public void Dispose() => _dir.Dispose();

    private static async Task<(FrameChannel Client, FrameChannel Server)> PairAsync(ShmListener listener, ShmOptions options)
    {
        ValueTask<FrameChannel> accept = listener.AcceptAsync();
        FrameChannel client = await ShmTransport.ConnectAsync(listener.Name, options);
        FrameChannel server = await accept;
        return (client, server);
    }

    [Theory]
    [InlineData(ShmIdleStrategy.Adaptive, false)]
    [InlineData(ShmIdleStrategy.BusySpin, false)]
    [InlineData(ShmIdleStrategy.Blocking, false)]
    [InlineData(ShmIdleStrategy.Adaptive, true)]
    [InlineData(ShmIdleStrategy.Blocking, true)]
    public async Task Echo_round_trips_in_process(ShmIdleStrategy strategy, bool portableWake)
    {
        ShmOptions options = _dir.Options(strategy) with { ForcePortableWake = portableWake };
        using ShmListener listener = ShmTransport.Listen("echo", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (var echo = new EchoClient(client))
        {
            Assert.Equal(!portableWake && Futex.IsSupported, ((ShmChannel)client).UsesFutex);
            Assert.Equal("shm://echo", client.RemoteEndpoint);
            server.Start(new EchoHandler(server));
            var random = new Random(3);
            for (int i = 0; i < 3000; i++)
            {
                byte[] payload = new byte[random.Next(0, 5000)];
                random.NextBytes(payload);
                Assert.Equal(payload, echo.RoundTrip(payload));
            }
        }
        Assert.Empty(ShmFiles.Of(Environment.ProcessId));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_frame_no_caller_polls_for_wakes_the_receive_thread_after_callers_left_the_ring_marked(bool portableWake)
    {
        // Back-to-back calls give the role back without re-arming the ring for the sleeping receive thread (every
        // call answered, the ring marked "callers poll"). A frame that is no answer must still wake that thread:
        // here a ping from the server, which the client's connection answers with a pong.
        using CoreDemandMeasuredAgain measured = MarkableRing();
        ShmOptions options = _dir.Options(ShmIdleStrategy.BusySpin) with { ForcePortableWake = portableWake };
        using ShmListener listener = ShmTransport.Listen("marked", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (var echo = new EchoClient(client))
        {
            var watcher = new PongWatcher(new EchoHandler(server));
            server.Start(watcher);
            long left = CallUntilCallersLeaveTheRingMarked(echo, (ShmChannel)client);
            output.WriteLine($"releases that left the ring marked: {left}");
            server.BeginFrame(new FrameHeader(FrameKind.Ping, 77, 0, 0));
            server.CommitFrame();
            Assert.Equal(77UL, await watcher.Pong.Task.WaitAsync(TimeSpan.FromSeconds(30)));
            Assert.Equal([9], echo.RoundTrip([9]));
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_long_wait_is_owed_to_nobody_and_its_answer_wakes_the_receive_thread_under_the_callers_mark(bool portableWake)
    {
        // A call marked LongWait (a standing request nobody polls for) is out while back-to-back calls run: it must not
        // keep them from leaving the ring marked (counted as owed, it would, for as long as it is out), and its answer,
        // which echoes the mark, must wake the sleeping receive thread, as a frame no caller polls for does.
        using CoreDemandMeasuredAgain measured = MarkableRing();
        ShmOptions options = _dir.Options(ShmIdleStrategy.BusySpin) with { ForcePortableWake = portableWake };
        using ShmListener listener = ShmTransport.Listen("longwait", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (var echo = new EchoClient(client))
        {
            var holder = new HoldingHandler(new EchoHandler(server));
            server.Start(holder);
            var shm = (ShmChannel)client;
            client.BeginFrame(new FrameHeader(FrameKind.Call, HoldingHandler.CallId, 0, HoldingHandler.Method, FrameFlags.LongWait), 0);
            client.CommitFrame();
            FrameHeader held = await holder.Held.Task.WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal(FrameFlags.LongWait, held.Flags);
            long left = CallUntilCallersLeaveTheRingMarked(echo, shm);
            output.WriteLine($"releases that left the ring marked with the long wait out: {left}");
            Assert.True(shm.ReceiveThreadSleeps, "the receive thread sleeps while callers leave the ring marked");
            int wakes = shm.ReceiveThreadWakeSeq;
            server.BeginFrame(new FrameHeader(FrameKind.Reply, HoldingHandler.CallId, 0, HoldingHandler.Method, FrameFlags.LongWait), 0);
            server.CommitFrame();
            Assert.True(SpinWait.SpinUntil(() => shm.ReceiveThreadWakeSeq != wakes, TimeSpan.FromSeconds(30)), "the long wait's answer woke nobody");
            Assert.Equal([9], echo.RoundTrip([9]));
        }
    }

    [Fact]
    public async Task Back_to_back_calls_are_all_answered_while_the_ring_wraps_under_the_callers_mark()
    {
        // A 4 KiB ring wraps every ~85 calls, each time with a padding record before the next reply. While the
        // callers mark the ring, padding before a frame they poll for wakes nobody: whoever reads that frame must
        // read the padding first, or the reply behind it stays unread. Whether a wrap finds the ring marked,
        // re-armed or slept on by a caller is up to the scheduler; RingTests proves whom a padding wakes in each case.
        ShmOptions options = _dir.Options() with { RingSize = 4096 };
        using ShmListener listener = ShmTransport.Listen("wraps", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (var echo = new EchoClient(client))
        {
            server.Start(new EchoHandler(server));
            var shm = (ShmChannel)client;
            long marked = CallUntilCallersLeaveTheRingMarked(echo, shm);
            for (int i = 0; i < 30_000; i++)
            {
                Assert.Equal([(byte)i, 2], echo.RoundTrip([(byte)i, 2]));
            }
            output.WriteLine($"30,000 calls (~350 wraps) answered; releases that left the mark: {shm.ReleasesLeftMarked - marked}");
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Async_calls_get_their_replies_after_the_server_dropped_a_streamed_reply_for_an_error(bool portableWake)
    {
        // A reply larger than the ring streams; the server drops it part-way (an abort record) and answers the call
        // with an error frame instead: one answer for one call. Counting the dropped reply as an answer too would make a
        // caller that stopped polling for a slow async call take every call for answered and leave the ring marked,
        // so the call's reply, which the server wakes nobody for, would stay unread.
        ShmOptions options = _dir.Options() with { RingSize = 4096, ForcePortableWake = portableWake };
        using ShmListener listener = ShmTransport.Listen("dropped", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (var echo = new EchoClient(client))
        {
            server.Start(new DroppingHandler(server, new EchoHandler(server)));
            var error = Assert.Throws<RemoteInvocationException>(() => echo.RoundTrip([1], DroppingHandler.Method));
            Assert.Equal("the reply failed", error.RemoteMessage);
            for (int i = 0; i < 5; i++)
            {
                // 40 ms: longer than an async call polls for its reply before it leaves it to the receive thread.
                PendingCall call = echo.Connection.BeginCall(0, EchoHandler.SlowMethod, isAsync: true);
                await SendSlow(call, (byte)i).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
                XCall.Marshal.MarshalReader reply = call.GetReplyReader();
                byte[] bytes = new byte[reply.Remaining];
                reply.ReadBlock(bytes);
                call.End();
                Assert.Equal([40, (byte)i], bytes);
            }
        }

        static ValueTask SendSlow(PendingCall call, byte tag)
        {
            XCall.Marshal.MarshalWriter writer = call.Arguments();
            writer.WriteBlock([40, tag]);
            return call.SendAsync(ref writer, CancellationToken.None);
        }
    }

    /// <summary>
    /// For the tests of a ring left marked: cores taken as free, so a caller asks the receive thread for the ring
    /// (on oversubscribed ones it does not), and (with <see cref="ShmIdleStrategy.BusySpin"/>) polls until its reply
    /// instead of sleeping on the ring, which would replace the mark; under a heavy load the case then still comes.
    /// </summary>
    private static CoreDemandMeasuredAgain MarkableRing()
    {
        CoreDemand.ForceOversubscribed(false);
        return new CoreDemandMeasuredAgain();
    }

    /// <summary>
    /// Makes back-to-back calls (each checked) until a caller gave the role back leaving the ring marked "callers
    /// poll", which takes the receive thread asleep first; returns how many releases did. Fails when none did.
    /// </summary>
    private static long CallUntilCallersLeaveTheRingMarked(EchoClient echo, ShmChannel client)
    {
        long marked = 0;
        for (int round = 0; round < 200 && marked == 0; round++)
        {
            for (int i = 0; i < 500; i++)
            {
                Assert.Equal([(byte)i], echo.RoundTrip([(byte)i]));
            }
            marked = client.ReleasesLeftMarked;
        }
        Assert.True(marked > 0, "no caller left the ring marked: the case under test did not happen");
        return marked;
    }

    /// <summary>Holds calls of <see cref="Method"/> unanswered (the test answers them), passing every other frame on.</summary>
    private sealed class HoldingHandler(IFrameHandler inner) : IFrameHandler
    {
        public const uint Method = 0x1077;
        public const ulong CallId = 1UL << 40; // far above the ids the connection's own calls take

        public TaskCompletionSource<FrameHeader> Held { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public XCall.Marshal.MarshalLimits Limits => inner.Limits;

        public void OnFrame(in FrameHeader header, ref XCall.Marshal.MarshalReader payload)
        {
            if (header.Kind == FrameKind.Call && header.MethodId == Method)
            {
                Held.TrySetResult(header);
                return;
            }
            inner.OnFrame(header, ref payload);
        }

        public void OnClosed(Exception? error) => inner.OnClosed(error);
    }

    /// <summary>Answers calls of <see cref="Method"/> with 12 KiB of reply it then drops, and an error frame.</summary>
    private sealed class DroppingHandler(FrameChannel channel, IFrameHandler inner) : IFrameHandler
    {
        public const uint Method = 0xAB07;

        public XCall.Marshal.MarshalLimits Limits => inner.Limits;

        public void OnFrame(in FrameHeader header, ref XCall.Marshal.MarshalReader payload)
        {
            if (header.Kind != FrameKind.Call || header.MethodId != Method)
            {
                inner.OnFrame(header, ref payload);
                return;
            }
            System.Buffers.IBufferWriter<byte> output = channel.BeginFrame(new FrameHeader(FrameKind.Reply, header.CallId, 0, header.MethodId));
            for (int written = 0; written < 12 * 1024;)
            {
                Span<byte> span = output.GetSpan(1);
                int n = Math.Min(span.Length, 12 * 1024 - written);
                span[..n].Fill(7);
                output.Advance(n);
                written += n;
            }
            channel.AbortFrame();
            var writer = new XCall.Marshal.MarshalWriter(channel.BeginFrame(new FrameHeader(FrameKind.Error, header.CallId, 0, header.MethodId)));
            writer.Write((byte)1); // the error record's format version, then type, message, stack, data and inner counts
            writer.WriteString("Tests.Dropped");
            writer.WriteString("the reply failed");
            writer.WriteString(null);
            writer.Write(0);
            writer.Write(0);
            writer.Flush();
            channel.CommitFrame();
        }

        public void OnClosed(Exception? error) => inner.OnClosed(error);
    }

    private sealed class PongWatcher(IFrameHandler inner) : IFrameHandler
    {
        public TaskCompletionSource<ulong> Pong { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public XCall.Marshal.MarshalLimits Limits => inner.Limits;

        public void OnFrame(in FrameHeader header, ref XCall.Marshal.MarshalReader payload)
        {
            if (header.Kind == FrameKind.Pong)
            {
                Pong.TrySetResult(header.CallId);
                return;
            }
            inner.OnFrame(header, ref payload);
        }

        public void OnClosed(Exception? error) => inner.OnClosed(error);
    }

    [Fact]
    public async Task Frames_larger_than_the_ring_pass_both_ways_through_a_channel()
    {
        ShmOptions options = _dir.Options() with { RingSize = 16 * 1024 };
        using ShmListener listener = ShmTransport.Listen("big", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (var echo = new EchoClient(client))
        {
            server.Start(new EchoHandler(server));
            foreach (int length in new[] { 10_000, 16 * 1024, 100_000, 3 << 20 })
            {
                byte[] payload = Patterns.Make(length, length);
                Assert.Equal(payload, echo.RoundTrip(payload));
            }
        }
    }

    [Fact]
    public async Task Calls_from_many_threads_share_one_channel_in_process()
    {
        ShmOptions options = _dir.Options();
        using ShmListener listener = ShmTransport.Listen("threads", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (var echo = new EchoClient(client))
        {
            server.Start(new EchoHandler(server));
            await Task.WhenAll(Enumerable.Range(0, 8).Select(t => Task.Factory.StartNew(() =>
            {
                byte[] payload = new byte[64];
                byte[] reply = new byte[64];
                for (int i = 0; i < 3000; i++)
                {
                    Patterns.Fill(payload, i, t);
                    echo.RoundTrip(payload, reply);
                    Assert.Equal(-1, Patterns.FirstMismatch(reply, i, t));
                }
            }, TaskCreationOptions.LongRunning)));
        }
    }

    [Theory]
    [InlineData(ShmIdleStrategy.Adaptive)]
    [InlineData(ShmIdleStrategy.Blocking)]
    public async Task One_way_frames_from_many_threads_all_arrive_in_each_threads_order(ShmIdleStrategy strategy)
    {
        // Held batches from threads that interleave under the send lock, bursts ended by nothing (the reader must take
        // each last held head itself), a receive thread that sleeps between bursts.
        const int Threads = 8;
        const int PerThread = 20_000;
        ShmOptions options = _dir.Options(strategy) with { RingSize = 64 * 1024 };
        using ShmListener listener = ShmTransport.Listen("oneways", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (client)
        {
            var handler = new OneWayOrderHandler(Threads, Threads * PerThread);
            server.Start(handler);
            client.Start(new OneWayOrderHandler(0, 0));
            await Task.WhenAll(Enumerable.Range(0, Threads).Select(t => Task.Factory.StartNew(() =>
            {
                var random = new Random(t);
                for (int i = 0; i < PerThread; i++)
                {
                    IBufferWriter<byte> output = client.BeginFrame(new FrameHeader(FrameKind.OneWay, 0, (ulong)t, (uint)i));
                    Span<byte> span = output.GetSpan(8);
                    BinaryPrimitives.WriteInt32LittleEndian(span, t);
                    BinaryPrimitives.WriteInt32LittleEndian(span[4..], i);
                    output.Advance(8);
                    client.CommitFrame();
                    if (random.Next(500) == 0)
                    {
                        Thread.Yield(); // the others' frames come between, or the reader catches up and sleeps
                    }
                }
            }, TaskCreationOptions.LongRunning)));
            Assert.True(handler.AllArrived.Wait(TimeSpan.FromSeconds(30)), $"{handler.Count} of {Threads * PerThread} one-way frames arrived");
            Assert.Null(handler.Failure);
            Assert.Equal(Threads * PerThread, handler.Count);
        }
    }

    /// <summary>Counts one-way frames and checks each sending thread's come in order, with intact payloads.</summary>
    private sealed class OneWayOrderHandler(int threads, int expected) : IFrameHandler
    {
        private readonly int[] _next = new int[threads];
        private int _count;

        public ManualResetEventSlim AllArrived { get; } = new();

        public int Count => Volatile.Read(ref _count);

        public string? Failure { get; private set; }

        public XCall.Marshal.MarshalLimits Limits => XCall.Marshal.MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref XCall.Marshal.MarshalReader payload)
        {
            int t = (int)header.ObjectId;
            byte[] bytes = new byte[8];
            if (header.Kind != FrameKind.OneWay || payload.Remaining != 8 || t >= _next.Length)
            {
                Failure ??= $"unexpected frame {header}";
                return;
            }
            payload.ReadBlock(bytes);
            int i = _next[t]++;
            if (header.MethodId != (uint)i || BinaryPrimitives.ReadInt32LittleEndian(bytes) != t || BinaryPrimitives.ReadInt32LittleEndian(bytes[4..]) != i)
            {
                Failure ??= $"thread {t}: frame {header.MethodId} came as its frame {i}";
            }
            if (Interlocked.Increment(ref _count) == expected)
            {
                AllArrived.Set();
            }
        }

        public void OnClosed(Exception? error)
        {
        }
    }

    [Theory]
    [InlineData(ShmIdleStrategy.Adaptive)]
    [InlineData(ShmIdleStrategy.Blocking)]
    public async Task Slow_replies_reach_callers_that_went_to_sleep(ShmIdleStrategy strategy)
    {
        // Replies after 0-40 ms (the caller sleeps on the ring) and one after 250 ms (it gives the role back
        // and blocks on the call), from several threads at once.
        ShmOptions options = _dir.Options(strategy);
        using ShmListener listener = ShmTransport.Listen("slow", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (var echo = new EchoClient(client))
        {
            server.Start(new EchoHandler(server));
            await Task.WhenAll(Enumerable.Range(0, 3).Select(t => Task.Factory.StartNew(() =>
            {
                for (int i = 0; i < 12; i++)
                {
                    byte[] payload = [(byte)(t == 0 && i == 5 ? 250 : (i * 7 + t) % 40), (byte)t, (byte)i];
                    Assert.Equal(payload, echo.RoundTrip(payload, EchoHandler.SlowMethod));
                    Assert.Equal([1, (byte)t], echo.RoundTrip([1, (byte)t]));
                }
            }, TaskCreationOptions.LongRunning)));
        }
    }

    [Fact]
    public async Task A_call_without_reply_times_out()
    {
        ShmOptions options = _dir.Options();
        using ShmListener listener = ShmTransport.Listen("timeout", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (var echo = new EchoClient(client, new ConnectionOptions { CallTimeout = TimeSpan.FromMilliseconds(300) }))
        {
            server.Start(new EchoHandler(server));
            Assert.Throws<XCallTimeoutException>(() => echo.RoundTrip([1, 2], EchoHandler.HangMethod));
            Assert.Equal([3, 4], echo.RoundTrip([3, 4])); // the connection still works
        }
    }

    [Fact]
    public async Task Dispose_tells_both_handlers_and_fails_pending_calls()
    {
        ShmOptions options = _dir.Options();
        using ShmListener listener = ShmTransport.Listen("dispose", options);

        // Orderly close from the client: OnClosed(null) on both sides.
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        var serverHandler = new EchoHandler(server);
        server.Start(serverHandler);
        var clientHandler = new RecordingHandler();
        client.Start(clientHandler);
        client.Dispose();
        Assert.Equal(1, clientHandler.ClosedCount);
        Assert.Null(clientHandler.ClosedWith);
        Assert.Null(await serverHandler.Closed.Task.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Throws<XCallDisconnectedException>(() => server.BeginFrame(new FrameHeader(FrameKind.OneWay, 0, 0, 1)));
        server.Dispose();

        // Server disposes while a call is pending: the call fails.
        (client, server) = await PairAsync(listener, options);
        var inCall = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        server.Start(new EchoHandler(server, line => { if (line == "IN CALL") inCall.TrySetResult(); }));
        using (var echo = new EchoClient(client))
        {
            Task call = Task.Run(() => echo.RoundTrip([9], EchoHandler.HangMethod));
            await inCall.Task.WaitAsync(TimeSpan.FromSeconds(30));
            server.Dispose();
            var ex = await Assert.ThrowsAsync<XCallDisconnectedException>(() => call.WaitAsync(TimeSpan.FromSeconds(30)));
            Assert.Contains("shm://dispose", ex.Message);
        }
        Assert.Empty(ShmFiles.Of(Environment.ProcessId));
    }

    [Fact]
    public async Task A_channel_its_peer_closed_releases_its_segment_without_being_disposed()
    {
        // A server forgets a connection its client closed; that channel is never disposed. Before, each kept
        // its segment mapped (and its descriptor and socket open) for the life of the process.
        ShmOptions options = _dir.Options();
        using ShmListener listener = ShmTransport.Listen("peerclosed", options);
        for (int i = 0; i < 3; i++)
        {
            (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
            var serverHandler = new EchoHandler(server);
            server.Start(serverHandler);
            client.Start(new RecordingHandler());
            client.Dispose();
            Assert.Null(await serverHandler.Closed.Task.WaitAsync(TimeSpan.FromSeconds(30)));
        }

        // The receive thread releases right after it reported the close: poll for that, bounded.
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (SegmentMemory.HoldersOf("peerclosed") != 0 && clock.Elapsed < TimeSpan.FromSeconds(30))
        {
            await Task.Delay(10);
        }
        Assert.Equal(0, SegmentMemory.HoldersOf("peerclosed"));
    }

    [Fact]
    public async Task A_handler_may_dispose_its_channel_while_handling_a_frame()
    {
        ShmOptions options = _dir.Options();
        using ShmListener listener = ShmTransport.Listen("selfdispose", options);
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        var handler = new DisposingHandler(server);
        server.Start(handler);
        using (var echo = new EchoClient(client))
        {
            Assert.Throws<XCallDisconnectedException>(() => echo.RoundTrip([1]));
        }
        Assert.Null(await handler.Closed.Task.WaitAsync(TimeSpan.FromSeconds(30)));
        server.Dispose(); // again, from outside: a no-op
        Assert.Empty(ShmFiles.Of(Environment.ProcessId));
    }

    [Fact]
    public async Task The_runtime_directory_is_0700_the_socket_0600_the_segment_a_sealed_memfd_and_nothing_is_left_afterwards()
    {
        string? memoryLink = null;
        int seals = 0;
        string[] filesWhileHandshaking = ["not called"];
        ShmOptions options = _dir.Options() with
        {
            SegmentCreated = memory =>
            {
                memoryLink = new FileInfo($"/proc/self/fd/{memory.DangerousGetHandle()}").LinkTarget;
                seals = Libc.FControl(memory, Libc.FGetSeals, 0);
                filesWhileHandshaking = ShmFiles.Of(Environment.ProcessId);
            },
        };
        ShmListener listener = ShmTransport.Listen("modes", options);
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(_dir.Path));
        Assert.True(File.Exists(listener.SocketPath));
        Assert.True(Libc.TryGetOwnerAndMode(listener.SocketPath, out _, out uint socketMode));
        Assert.Equal(0xC000u, socketMode & 0xF000); // a socket
        Assert.Equal(0x180u, socketMode & 0x1FF);   // 0600

        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        output.WriteLine($"segment {memoryLink}, seals 0x{seals:x}");
        // An anonymous memory file that no one can open by name, whose size no one can change.
        Assert.Equal($"/memfd:{ShmSegment.NamePrefix}modes (deleted)", memoryLink);
        Assert.Equal(ShmSegment.Seals, seals & ShmSegment.Seals);
        Assert.Empty(filesWhileHandshaking);
        Assert.Equal(2, SegmentMemory.HoldersOf("modes")); // one mapping per side, no descriptor left open

        client.Dispose();
        server.Dispose();
        listener.Dispose();
        Assert.False(File.Exists(listener.SocketPath));
        Assert.Equal(0, SegmentMemory.HoldersOf("modes"));
        Assert.Empty(ShmFiles.Of(Environment.ProcessId));
    }

    [Fact]
    public void A_connect_timeout_too_long_for_a_timer_is_refused_up_front()
    {
        // 60 days is past what a handshake's timer takes: accepted, it would make every timer throw and the listener
        // drop every client.
        ShmOptions options = _dir.Options() with { ConnectTimeout = TimeSpan.FromDays(60) };
        Assert.Equal("ConnectTimeout", Assert.Throws<ArgumentOutOfRangeException>(() => ShmTransport.Listen("long", options)).ParamName);
        Assert.Equal("ConnectTimeout", Assert.Throws<ArgumentOutOfRangeException>(() => ShmTransport.Connect("long", options)).ParamName);
    }

    [Theory]
    [InlineData(999)]
    [InlineData(0)]
    [InlineData(-5)]
    public void A_heartbeat_timeout_under_a_second_is_refused_up_front(int milliseconds)
    {
        // Under a second the peer's heartbeat thread (a beat every 250 ms at most) could miss it by a late tick.
        ShmOptions options = _dir.Options() with { HeartbeatTimeout = TimeSpan.FromMilliseconds(milliseconds) };
        Assert.Equal("HeartbeatTimeout", Assert.Throws<ArgumentOutOfRangeException>(() => ShmTransport.Listen("beat", options)).ParamName);
        Assert.Equal("HeartbeatTimeout", Assert.Throws<ArgumentOutOfRangeException>(() => ShmTransport.Connect("beat", options)).ParamName);
        using ShmListener listener = ShmTransport.Listen("beat", _dir.Options() with { HeartbeatTimeout = Timeout.InfiniteTimeSpan });
    }

    [Fact]
    public async Task A_live_server_keeps_its_name()
    {
        ShmOptions options = _dir.Options();
        using ShmListener listener = ShmTransport.Listen("taken", options);
        var ex = Assert.Throws<IOException>(() => ShmTransport.Listen("taken", options));
        Assert.Contains("shm://taken", ex.Message);

        // The probe connection of the second Listen does not disturb the first listener.
        (FrameChannel client, FrameChannel server) = await PairAsync(listener, options);
        using (server)
        using (var echo = new EchoClient(client))
        {
            server.Start(new EchoHandler(server));
            Assert.Equal([5], echo.RoundTrip([5]));
        }
    }

    [Fact]
    public async Task Connecting_to_a_name_nobody_serves_fails_naming_the_address()
    {
        var ex = Assert.Throws<XCallDisconnectedException>(() => ShmTransport.Connect("nobody", _dir.Options()));
        Assert.Contains("shm://nobody", ex.Message);
        Assert.Equal("shm://nobody", ex.Endpoint);
        await Assert.ThrowsAsync<XCallDisconnectedException>(() => ShmTransport.ConnectAsync("nobody", _dir.Options()));
    }

    [Fact]
    public async Task Accepting_can_be_cancelled_and_ends_with_the_listener()
    {
        using ShmListener listener = ShmTransport.Listen("cancel", _dir.Options());
        using var cts = new CancellationTokenSource();
        ValueTask<FrameChannel> accept = listener.AcceptAsync(cts.Token);
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await accept);

        var blocked = Task.Run(listener.Accept);
        listener.Dispose();
        await Assert.ThrowsAsync<ObjectDisposedException>(() => blocked.WaitAsync(TimeSpan.FromSeconds(30)));
    }

    [Fact]
    public async Task A_malformed_record_closes_that_channel_only()
    {
        ShmOptions options = _dir.Options();
        using ShmListener listener = ShmTransport.Listen("malformed", options);
        (FrameChannel badClient, FrameChannel badServer) = await PairAsync(listener, options);
        (FrameChannel goodClient, FrameChannel goodServer) = await PairAsync(listener, options);
        using (badServer)
        using (goodServer)
        using (var bad = new EchoClient(badClient))
        using (var good = new EchoClient(goodClient))
        {
            var badHandler = new EchoHandler(badServer);
            badServer.Start(badHandler);
            goodServer.Start(new EchoHandler(goodServer));
            Assert.Equal([1], bad.RoundTrip([1]));

            // Publish a record that is too short to be anything into the ring the bad client writes.
            (ShmRing ring, RingSignal signal, long tail) = ((ShmChannel)badClient).Outgoing;
            unsafe
            {
                byte* record = ring.Data + (tail & (ring.Capacity - 1));
                *(int*)(record + 4) = (int)RecordType.FrameStart;
                Interlocked.Exchange(ref *(int*)record, 5);
            }
            signal.WakeConsumerIfSleeping();

            Exception? error = await badHandler.Closed.Task.WaitAsync(TimeSpan.FromSeconds(30));
            Assert.IsType<XCallProtocolException>(error);
            output.WriteLine($"server side closed with: {error.Message}");
            Assert.Throws<XCallDisconnectedException>(() => bad.RoundTrip([2]));
            Assert.Equal([3], good.RoundTrip([3]));
        }
    }

    /// <summary>Disposes its own channel from inside OnFrame (on the receive thread).</summary>
    private sealed class DisposingHandler(FrameChannel channel) : IFrameHandler
    {
        public TaskCompletionSource<Exception?> Closed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public XCall.Marshal.MarshalLimits Limits => XCall.Marshal.MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref XCall.Marshal.MarshalReader payload) => channel.Dispose();

        public void OnClosed(Exception? error) => Closed.TrySetResult(error);
    }
}
