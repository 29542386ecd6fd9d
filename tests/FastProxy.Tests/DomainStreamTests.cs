using XCall.Domain;
using XCall.Tests.Contracts;
using XCall.Tests.Shared;

namespace XCall.FastProxy.Tests;

/// <summary>Streams through the domain transport, into a real collectible load context.</summary>
public sealed class DomainStreamTests : StreamContractTests, IDisposable
{
    private readonly DomainHost _host;

    public DomainStreamTests()
    {
        _host = DomainHost.Load(DomainShapesTests.ServicePath, "streams-" + Guid.NewGuid().ToString("N"));
        Streams = _host.Create<IStreams>();
    }

    protected override IStreams Streams { get; }

    /// <summary>Nothing is batched across a load context: the consumer's MoveNextAsync runs the producer's.</summary>
    protected override IStreams SmallBatchStreams => Streams;

    protected override int PrefetchBound => 0;

    [Fact]
    public async Task Disposing_the_host_mid_stream_fails_the_enumeration_as_disconnected()
    {
        await using IAsyncEnumerator<int> items = Streams.Endless(Guid.NewGuid().ToString("N"), default).GetAsyncEnumerator();
        Assert.True(await items.MoveNextAsync());
        _host.Dispose();
        await Assert.ThrowsAsync<XCallDisconnectedException>(async () => await items.MoveNextAsync());
    }

    public void Dispose() => _host.Dispose();
}
