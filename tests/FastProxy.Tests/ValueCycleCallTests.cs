using XCall.Marshal;
using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>A mutable record: equality and hash code by members, so a cycle of them never ends comparing.</summary>
public sealed record class RecordLink
{
    public string Name { get; set; } = "";

    public RecordLink? Next { get; set; }
}

/// <summary>Counts the links of a chain of records.</summary>
[Remotable]
public interface IRecordChain
{
    int Count(RecordLink? head);

    /// <summary>Counts after a delay: a call in flight on the connection.</summary>
    Task<int> CountLaterAsync(int milliseconds, RecordLink? head);
}

public sealed class RecordChain : IRecordChain
{
    public int Count(RecordLink? head)
    {
        int n = 0;
        for (RecordLink? link = head; link is not null && n < 1000; link = link.Next)
        {
            n++;
        }
        return n;
    }

    public async Task<int> CountLaterAsync(int milliseconds, RecordLink? head)
    {
        await Task.Delay(milliseconds);
        return Count(head);
    }
}

/// <summary>
/// A cycle of mutable records is refused by the reader (its equality and hash code would never end); the writer
/// refuses to send it, so that one call fails and the other calls on the connection go on.
/// </summary>
public sealed class ValueCycleCallTests
{
    [Fact]
    public async Task A_cycle_of_records_fails_its_call_and_the_connection_serves_on()
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        using var server = new XCallConnection(serverChannel);
        server.ExposeRoot(new RecordChain(), ContractRegistry.Get<IRecordChain>().Dispatcher);
        server.Start();
        using var client = new XCallConnection(clientChannel);
        client.Start();
        IRecordChain chain = client.GetProxy<IRecordChain>();
        Task<int> inFlight = chain.CountLaterAsync(200, new RecordLink { Name = "w" }); // a call in flight on the same connection

        var a = new RecordLink { Name = "a" };
        var b = new RecordLink { Name = "b", Next = a };
        a.Next = b;
        var refused = Assert.Throws<XCallException>(() => chain.Count(a));
        Assert.IsNotType<XCallDisconnectedException>(refused);
        Assert.Contains("cycle", refused.Message);

        Assert.Equal(1, await inFlight);
        Assert.Equal(3, chain.Count(new RecordLink { Name = "x", Next = new RecordLink { Name = "y", Next = new RecordLink { Name = "z" } } }));
        Assert.False(client.IsClosed);
        Assert.False(server.IsClosed);
    }
}
