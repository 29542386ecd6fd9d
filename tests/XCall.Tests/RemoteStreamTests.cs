using XCall.Tests.Contracts;
using XCall.Tests.Shared;

namespace XCall.Tests;

/// <summary>A host process per test class, serving <see cref="IStreams"/>; two connections to it, one asking for small batches.</summary>
public abstract class StreamHostFixture : IDisposable
{
    /// <summary>Connection options whose consumer asks for batches of <paramref name="items"/> items.</summary>
    public static RemoteOptions SmallBatches(int items) =>
        new() { Connection = new ConnectionOptions { StreamBatchBytes = items * sizeof(int), StreamBatchItems = items } };

    protected StreamHostFixture(string address, string[] hostArgs, int smallBatch)
    {
        Host = HostProcess.Start(address, hostArgs);
        Streams = Remote.Open<IStreams>(Host.Address);
        SmallBatchStreams = Remote.Open<IStreams>(Host.Address, SmallBatches(smallBatch));
    }

    public HostProcess Host { get; }

    public RemoteService<IStreams> Streams { get; }

    public RemoteService<IStreams> SmallBatchStreams { get; }

    public void Dispose()
    {
        Streams.Dispose();
        SmallBatchStreams.Dispose();
        Host.Dispose();
    }
}

public sealed class ShmStreamHostFixture() : StreamHostFixture($"shm://{HostProcess.UniqueName("streams")}", [], RemoteStreamTests.Batch);

public sealed class TcpStreamHostFixture() : StreamHostFixture($"tcp://127.0.0.1:0/{HostProcess.UniqueName("streams")}", ["--no-shm"], RemoteStreamTests.Batch);

/// <summary>Streams over shared memory, to a real server process.</summary>
public sealed class ShmStreamTests(ShmStreamHostFixture fixture) : StreamContractTests, IClassFixture<ShmStreamHostFixture>
{
    protected override IStreams Streams => fixture.Streams.Proxy;

    protected override IStreams SmallBatchStreams => fixture.SmallBatchStreams.Proxy;
}

/// <summary>Streams over TCP, to a real server process.</summary>
public sealed class TcpStreamTests(TcpStreamHostFixture fixture) : StreamContractTests, IClassFixture<TcpStreamHostFixture>
{
    protected override IStreams Streams => fixture.Streams.Proxy;

    protected override IStreams SmallBatchStreams => fixture.SmallBatchStreams.Proxy;
}

/// <summary>A stream whose producer's process dies.</summary>
public sealed class RemoteStreamTests
{
    /// <summary>The batch the fixtures' small-batch connections ask for (StreamContractTests.SmallBatch).</summary>
    internal const int Batch = 16;

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task A_peer_lost_mid_stream_fails_the_enumeration_as_disconnected(string transport)
    {
        string address = transport == "shm" ? $"shm://{HostProcess.UniqueName("stream-kill")}" : $"tcp://127.0.0.1:0/{HostProcess.UniqueName("stream-kill")}";
        using HostProcess host = HostProcess.Start(address, "--no-shm");
        using RemoteService<IStreams> service = Remote.Open<IStreams>(host.Address, StreamHostFixture.SmallBatches(Batch));
        await using IAsyncEnumerator<int> items = service.Proxy.Endless("kill", default).GetAsyncEnumerator();
        Assert.True(await items.MoveNextAsync());
        host.Kill();
        // What was read ahead before the kill still arrives (at most two batches); then the loss.
        int read = 1;
        await Assert.ThrowsAsync<XCallDisconnectedException>(async () =>
        {
            while (await items.MoveNextAsync())
            {
                Assert.Equal(read++, items.Current);
                Assert.InRange(read, 1, 2 * Batch + 1);
            }
        });
    }
}
