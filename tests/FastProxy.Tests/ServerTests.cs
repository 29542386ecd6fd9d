using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Transport;

namespace XCall.FastProxy.Tests;

/// <summary>Hosting several services for several clients, and the contract handshake.</summary>
public sealed class ServerTests
{
    [Fact]
    public void Client_gets_each_registered_service_by_contract()
    {
        using var server = new XCallServer().Add<IShapes>(new Shapes()).Add<IGreeter>(new Greeter());
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair();
        server.Attach(s);
        using var client = new XCallConnection(c);
        client.Start();
        Assert.Equal(5, client.GetService<IShapes>().Add(2, 3));
        Assert.Equal("Hello, Bo", client.GetService<IGreeter>().Greet("Bo"));
        Assert.Single(server.Connections);
    }

    [Fact]
    public void Asking_for_a_service_that_is_not_offered_fails_clearly()
    {
        using var server = new XCallServer().Add<IGreeter>(new Greeter());
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair();
        server.Attach(s);
        using var client = new XCallConnection(c);
        client.Start();
        var ex = Assert.Throws<XCallException>(() => client.GetService<IShapes>());
        Assert.Contains("no service for XCall.Tests.Contracts.IShapes", ex.Message);
    }

    [Fact]
    public async Task GetServiceAsync_awaits_the_peers_answer_and_fails_as_the_sync_call_does()
    {
        using var server = new XCallServer().Add<IGreeter>(new Greeter());
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair();
        server.Attach(s);
        using var client = new XCallConnection(c);
        client.Start();
        IGreeter greeter = await client.GetServiceAsync<IGreeter>();
        Assert.Equal("Hello, Bo", greeter.Greet("Bo"));
        var refused = await Assert.ThrowsAsync<XCallException>(() => client.GetServiceAsync<IShapes>());
        Assert.Contains("no service for XCall.Tests.Contracts.IShapes", refused.Message);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => client.GetServiceAsync<IGreeter>(new CancellationToken(canceled: true)));
        Assert.Equal("Hello, Al", (await client.GetServiceAsync<IGreeter>()).Greet("Al")); // the cancelled Hello left nothing behind
    }

    [Fact]
    public void Contract_hash_mismatch_names_the_interface_and_both_hashes()
    {
        using var server = new XCallServer().Add<IGreeter>(new Greeter());
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair();
        server.Attach(s);
        using var client = new XCallConnection(c);
        client.Start();
        ulong real = ContractRegistry.Get<IGreeter>().Hash;
        var ex = Assert.Throws<XCallException>(() => client.Hello("XCall.Tests.Contracts.IGreeter", 0x1234, client.Options.CallTimeout));
        Assert.Contains("XCall.Tests.Contracts.IGreeter", ex.Message);
        Assert.Contains("0000000000001234", ex.Message);
        Assert.Contains(real.ToString("x16"), ex.Message);
    }

    [Fact]
    public void Closing_a_client_removes_its_connection_and_others_keep_working()
    {
        using var server = new XCallServer().Add<IShapes>(new Shapes());
        (InMemoryChannel c1, InMemoryChannel s1) = InMemoryChannel.CreatePair();
        (InMemoryChannel c2, InMemoryChannel s2) = InMemoryChannel.CreatePair();
        XCallConnection served1 = server.Attach(s1);
        server.Attach(s2);
        var client1 = new XCallConnection(c1);
        client1.Start();
        using var client2 = new XCallConnection(c2);
        client2.Start();
        IShapes one = client1.GetService<IShapes>();
        IShapes two = client2.GetService<IShapes>();
        Assert.Equal(2, one.Add(1, 1));
        var gone = new TaskCompletionSource();
        served1.Closed += (_, _) => gone.TrySetResult();
        client1.Dispose();
        Assert.True(gone.Task.Wait(TimeSpan.FromSeconds(30)));
        Assert.Single(server.Connections);
        Assert.Equal(4, two.Add(2, 2));
    }

    [Fact]
    public async Task A_channel_that_fails_to_start_does_not_end_serving_the_others()
    {
        using var server = new XCallServer().Add<IShapes>(new Shapes());
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair("serve");
        var accepted = new Queue<FrameChannel>([new FailingChannel(), s]);
        using var stop = new CancellationTokenSource();
        Task serving = server.ServeAsync(ct => accepted.TryDequeue(out FrameChannel? next)
            ? ValueTask.FromResult(next)
            : new ValueTask<FrameChannel>(Task.Delay(Timeout.Infinite, ct).ContinueWith<FrameChannel>(_ => throw new OperationCanceledException(ct), TaskScheduler.Default)), stop.Token);

        using var client = new XCallConnection(c, new ConnectionOptions { CallTimeout = TimeSpan.FromSeconds(30) });
        client.Start();
        Assert.Equal(5, client.GetService<IShapes>().Add(2, 3)); // served: the failed channel did not end the loop
        Assert.Single(server.Connections);
        stop.Cancel();
        await serving.WaitAsync(TimeSpan.FromSeconds(30));
    }

    /// <summary>A channel whose peer is gone before it starts.</summary>
    private sealed class FailingChannel : FrameChannel
    {
        public override string RemoteEndpoint => "mem://failing";

        public override void Start(IFrameHandler handler) => throw new XCallDisconnectedException(RemoteEndpoint, "gone before it started");

        public override System.Buffers.IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline) => throw new XCallDisconnectedException(RemoteEndpoint, "gone");

        public override void CommitFrame()
        {
        }

        public override void AbortFrame()
        {
        }

        public override void Dispose()
        {
        }
    }
}
