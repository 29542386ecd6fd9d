using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Tests.Shared;

namespace XCall.FastProxy.Tests;

/// <summary>Streams as frames through an in-memory channel pair.</summary>
public sealed class FramedStreamTests : StreamContractTests, IDisposable
{
    private readonly XCallServer _server = new XCallServer().Add<IStreams>(new Streams());
    private readonly List<XCallConnection> _connections = [];

    public FramedStreamTests()
    {
        Streams = Connect(null).GetService<IStreams>();
        SmallBatchStreams = Connect(new ConnectionOptions { StreamBatchBytes = SmallBatch * sizeof(int), StreamBatchItems = SmallBatch }).GetService<IStreams>();
    }

    protected override IStreams Streams { get; }

    protected override IStreams SmallBatchStreams { get; }

    private XCallConnection Connect(ConnectionOptions? options)
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        _connections.Add(_server.Attach(serverChannel));
        var client = new XCallConnection(clientChannel, options);
        client.Start();
        _connections.Add(client);
        return client;
    }

    [Fact]
    public async Task The_producer_is_forgotten_once_the_stream_is_read()
    {
        XCallConnection server = _connections[0];
        XCallConnection client = _connections[1];
        Assert.Equal(300, (await ToList(Streams.Range(0, 300))).Count);
        Assert.Equal(0, client.ImportedReferenceCount);
        // The release frame is one way: a call after it on the same connection finds it handled.
        Assert.Equal(0, await Streams.Produced("nothing"));
        Assert.Equal(0, server.ExposedObjectCount);
    }

    [Fact]
    public async Task A_consumer_that_goes_away_mid_stream_stops_the_producer()
    {
        string key = Guid.NewGuid().ToString("N");
        XCallConnection gone = Connect(null);
        IAsyncEnumerator<int> items = gone.GetService<IStreams>().Endless(key, default).GetAsyncEnumerator();
        Assert.True(await items.MoveNextAsync());
        gone.Dispose(); // no Close, no release: the server's connection closes under the producer
        Assert.Contains(await Streams.Ended(key).WaitAsync(TimeSpan.FromSeconds(30)), new[] { "disposed", "cancelled" });
    }

    public void Dispose()
    {
        foreach (XCallConnection connection in _connections)
        {
            connection.Dispose();
        }
        _server.Dispose();
    }
}
