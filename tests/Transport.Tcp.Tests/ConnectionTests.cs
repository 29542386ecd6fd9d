using System.Net;
using XCall.Marshal;
using XCall.Runtime.CompilerServices;
using XCall.Runtime;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

/// <summary>The call runtime (<see cref="XCallConnection"/>) over TCP: synchronous callers that read their own
/// replies (leader / follower), asynchronous callers, and both at once.</summary>
public sealed class ConnectionTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Concurrent_sync_callers_get_their_own_results(bool callersRead)
    {
        var options = new TcpOptions { CallerReadsReplies = callersRead };
        using var pair = await ConnectionPair.CreateAsync(options);
        const int Threads = 16;
        const int CallsEach = 1000;
        var failures = new List<string>();
        Thread[] threads = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
        {
            for (int i = 0; i < CallsEach; i++)
            {
                int value = (t << 16) | i;
                int result = pair.Call(value);
                if (result != value)
                {
                    lock (failures)
                    {
                        failures.Add($"{value} -> {result}");
                    }
                }
            }
        })).ToArray();
        foreach (Thread thread in threads)
        {
            thread.Start();
        }
        foreach (Thread thread in threads)
        {
            Assert.True(thread.Join(Timeouts.Long), "a caller hung");
        }
        Assert.Empty(failures);
        output.WriteLine($"lost wake-ups recovered by the sleep slices so far in this process: {TcpFrameChannel.LostWakeups}");
    }

    [Fact]
    public async Task Async_calls_interleaved_with_sync_calls_all_complete()
    {
        using var pair = await ConnectionPair.CreateAsync(new TcpOptions());
        for (int round = 0; round < 200; round++)
        {
            Assert.Equal(round, pair.Call(round));
            // Right after a sync call the caller may still own the socket; the async reply must still come.
            Assert.Equal(-round, await pair.CallAsync(-round).AsTask().WaitAsync(Timeouts.Long));
        }
        Task<int>[] many = Enumerable.Range(0, 500).Select(i => pair.CallAsync(i).AsTask()).ToArray();
        int sync = pair.Call(12345);
        Assert.Equal(12345, sync);
        Assert.Equal(Enumerable.Range(0, 500), await Task.WhenAll(many).WaitAsync(Timeouts.Long));
    }

    [Fact]
    public async Task Sync_caller_fails_fast_when_the_server_goes_away_while_it_reads()
    {
        var options = new TcpOptions { HeartbeatTimeout = Timeout.InfiniteTimeSpan };
        var pair = await ConnectionPair.CreateAsync(options, serverDelay: TimeSpan.FromSeconds(20));
        using (pair)
        {
            var caller = Task.Factory.StartNew(() => pair.Call(1), TaskCreationOptions.LongRunning);
            await pair.ServerReceivedCall.WaitAsync(Timeouts.Long);
            pair.ServerChannel.Dispose(); // the caller is blocked reading its own reply, or asleep
            await Assert.ThrowsAsync<XCallDisconnectedException>(() => caller.WaitAsync(Timeouts.Long));
        }
    }

    [Fact]
    public async Task Sync_call_times_out_while_the_caller_reads()
    {
        var pair = await ConnectionPair.CreateAsync(new TcpOptions(), serverDelay: TimeSpan.FromSeconds(20),
            clientOptions: new ConnectionOptions { CallTimeout = TimeSpan.FromMilliseconds(200) });
        using (pair)
        {
            await Assert.ThrowsAsync<XCallTimeoutException>(() => Task.Factory.StartNew(() => pair.Call(1), TaskCreationOptions.LongRunning));
            pair.ReleaseServer();
            Assert.Equal(2, pair.Call(2)); // the connection is still good
        }
    }

    /// <summary>A client <see cref="XCallConnection"/> and a server one exposing <see cref="EchoIntDispatcher"/>.</summary>
    private sealed class ConnectionPair : IDisposable
    {
        private readonly TcpChannelListener _listener;
        private readonly XCallConnection _client;
        private readonly XCallConnection _server;
        private readonly SlowEcho _dispatcher;

        private ConnectionPair(TcpChannelListener listener, XCallConnection client, XCallConnection server, SlowEcho dispatcher)
        {
            _listener = listener;
            _client = client;
            _server = server;
            _dispatcher = dispatcher;
        }

        public FrameChannel ServerChannel => _server.Channel;

        public Task ServerReceivedCall => _dispatcher.Received.Task;

        public static async Task<ConnectionPair> CreateAsync(TcpOptions options, TimeSpan? serverDelay = null, ConnectionOptions? clientOptions = null)
        {
            var listener = TcpTransport.Listen(new IPEndPoint(IPAddress.Loopback, 0), options);
            FrameChannel clientChannel = await TcpTransport.ConnectAsync("127.0.0.1", listener.LocalEndpoint.Port, options);
            FrameChannel serverChannel = await listener.AcceptAsync();
            var server = new XCallConnection(serverChannel);
            var dispatcher = new SlowEcho(serverDelay);
            server.ExposeRoot(new object(), dispatcher);
            server.Start();
            var client = new XCallConnection(clientChannel, clientOptions);
            client.Start();
            return new ConnectionPair(listener, client, server, dispatcher);
        }

        public void ReleaseServer() => _dispatcher.Release.Cancel();

        public int Call(int value)
        {
            PendingCall call = _client.BeginCall(0, EchoIntDispatcher.MethodId, isAsync: false);
            try
            {
                MarshalWriter writer = call.Arguments();
                writer.WriteInt32(value);
                call.SendAndWait(ref writer);
                MarshalReader reader = call.GetReplyReader();
                return reader.ReadInt32();
            }
            finally
            {
                call.End();
            }
        }

        public async ValueTask<int> CallAsync(int value)
        {
            PendingCall call = _client.BeginCall(0, EchoIntDispatcher.MethodId, isAsync: true);
            try
            {
                await Send(call, value);
                return Read(call);
            }
            finally
            {
                call.End();
            }

            static ValueTask Send(PendingCall call, int value)
            {
                MarshalWriter writer = call.Arguments();
                writer.WriteInt32(value);
                return call.SendAsync(ref writer, CancellationToken.None);
            }

            static int Read(PendingCall call)
            {
                MarshalReader reader = call.GetReplyReader();
                return reader.ReadInt32();
            }
        }

        public void Dispose()
        {
            _client.Dispose();
            _server.Dispose();
            _listener.Dispose();
        }
    }

    /// <summary>Echoes an int; optionally holds each call until <see cref="Release"/> or the delay.</summary>
    private sealed class SlowEcho(TimeSpan? delay) : Dispatcher
    {
        private readonly EchoIntDispatcher _inner = new();

        public TaskCompletionSource Received { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public CancellationTokenSource Release { get; } = new();

        public override string ContractName => _inner.ContractName;

        public override ulong ContractHash => _inner.ContractHash;

        public override string GetMethodName(uint methodId) => _inner.GetMethodName(methodId);

        public override ValueTask Dispatch(object target, uint methodId, ref MarshalReader args, ServerCall call)
        {
            Received.TrySetResult();
            if (delay is { } d && !Release.IsCancellationRequested)
            {
                Release.Token.WaitHandle.WaitOne(d);
            }
            return _inner.Dispatch(target, methodId, ref args, call);
        }
    }
}
