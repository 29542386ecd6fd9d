using XCall.Marshal;
using XCall.Runtime.CompilerServices;
using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>Takes a reference together with something that can make the call's frame be dropped.</summary>
[Remotable]
public interface IReferenceTaker
{
    /// <summary>A reference and a token (a token cancelled before the call drops the frame).</summary>
    int Take(ICallback callback, CancellationToken cancellationToken);

    /// <summary>A reference, then a shape (an unknown shape fails the marshalling after the reference was written).</summary>
    int TakeWithShape(ICallback callback, Shape shape);

    /// <summary>Async: a reference and a token.</summary>
    Task<int> TakeAsync(ICallback callback, CancellationToken cancellationToken);

    /// <summary>One-way: a reference, then a shape.</summary>
    [OneWay]
    void Post(ICallback callback, Shape shape);
}

/// <summary>
/// A reference written into a call frame that is then dropped (never sent) is not left exposed: the peer
/// never got its id, so it would never release it and the object would stay reachable for the connection's life.
/// </summary>
public sealed class DroppedFrameExportTests
{
    [Fact]
    public async Task References_written_into_frames_that_are_dropped_are_not_left_exposed()
    {
        using var pair = new Pair("dropped");
        XCallConnection client = pair.Client;
        IReferenceTaker taker = client.GetProxy<IReferenceTaker>();
        using var cancelled = new CancellationTokenSource();
        cancelled.Cancel();
        var kept = new Callback();

        for (int i = 0; i < 5; i++)
        {
            Assert.ThrowsAny<OperationCanceledException>(() => taker.Take(new Callback(), cancelled.Token));
            Assert.Throws<XCallException>(() => taker.TakeWithShape(new Callback(), new Triangle { Base = 1 }));
            Assert.Throws<XCallException>(() => taker.Post(new Callback(), new Triangle { Base = 1 }));
            Assert.ThrowsAny<OperationCanceledException>(() => taker.Take(kept, cancelled.Token)); // an object sent before keeps its count
            // An async call whose token is cancelled before it goes is dropped too, not sent and then cancelled.
            var early = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => taker.TakeAsync(new Callback(), cancelled.Token));
            Assert.Equal(cancelled.Token, early.CancellationToken);
        }
        Assert.Equal(0, client.ExposedObjectCount);

        Assert.Equal(1, taker.Take(kept, CancellationToken.None)); // a frame that goes: its reference stands until released
        Assert.Equal(2, taker.TakeWithShape(kept, new Circle { Radius = 1 }));
        Assert.True(client.ExposedObjectCount <= 1, $"{client.ExposedObjectCount} objects exposed for one");
    }

    [Fact]
    public void A_reply_dropped_for_a_lost_link_neither_exposes_nor_takes_back_what_an_open_frame_exposed()
    {
        using var pair = new Pair("dropped-reply");
        XCallConnection client = pair.Client;
        var kept = new Callback();
        PendingCall call = client.BeginCall(0, 1, isAsync: false); // a frame open on this thread...
        ulong id = client.ExportObject(kept, ContractRegistry.Get<ICallback>().Dispatcher); // ...that exposes an object

        // Meanwhile another thread writes the reply to a call of a link already lost (dropped, written without the send side).
        var other = new Thread(() =>
        {
            var dropped = new ServerCall(client) { Link = -1 };
            MarshalWriter writer = dropped.BeginReply();
            ObjectReferenceMarshaller<ICallback>.Write(ref writer, new Callback());
            dropped.EndReply(ref writer);
        });
        other.Start();
        Assert.True(other.Join(TimeSpan.FromSeconds(30)), "the dropped reply did not finish");

        Assert.Equal(1, client.ExposedObjectCount); // the open frame's export stands, the dropped reply added none
        Assert.Same(kept, client.FindExported(id));
        call.Abort(); // now that frame is dropped too: its export goes
        call.End();
        Assert.Equal(0, client.ExposedObjectCount);
    }

    /// <summary>A client connection and a server connection serving <see cref="Taker"/>, over in-memory channels.</summary>
    private sealed class Pair : IDisposable
    {
        private readonly XCallConnection _server;

        public Pair(string name)
        {
            (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair(name);
            _server = new XCallConnection(serverChannel);
            _server.ExposeRoot(new Taker(), ContractRegistry.Get<IReferenceTaker>().Dispatcher);
            _server.Start();
            Client = new XCallConnection(clientChannel);
            Client.Start();
        }

        public XCallConnection Client { get; }

        public void Dispose()
        {
            Client.Dispose();
            _server.Dispose();
        }
    }

    private sealed class Taker : IReferenceTaker
    {
        public int Take(ICallback callback, CancellationToken cancellationToken) => 1;

        public int TakeWithShape(ICallback callback, Shape shape) => 2;

        public Task<int> TakeAsync(ICallback callback, CancellationToken cancellationToken) => Task.FromResult(3);

        public void Post(ICallback callback, Shape shape)
        {
        }
    }

    private sealed class Callback : ICallback
    {
        public int Report(int value) => value;

        public int Nested(int depth) => depth;
    }
}
