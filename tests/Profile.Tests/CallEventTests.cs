using XCall.Profile.Tests.Support;
using XCall.Runtime;

namespace XCall.Profile.Tests;

/// <summary>The XCall EventSource as an in-process EventListener sees it.</summary>
[Collection(InProcessCallsCollection.Name)]
public sealed class CallEventTests
{
    private const string ShapesContract = "XCall.Tests.Contracts.IShapes";
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task Every_framed_call_writes_one_CallCompleted_event_per_side()
    {
        string name = "events-" + Guid.NewGuid().ToString("N");
        using var listener = new CallEventListener($"mem://{name}/");
        using (var connection = new ShapesConnection(name))
        {
            for (int i = 0; i < 10; i++)
            {
                Assert.Equal(i + 2, connection.Shapes.Add(i, 2));
            }
            for (int i = 0; i < 5; i++)
            {
                Assert.Equal("hola", connection.Shapes.Echo("hola"));
            }
            // The server writes its event after sending the reply, so the last ones may still be on their way.
            await listener.WaitForAsync(30, s_timeout);
        }

        IReadOnlyList<CallEvent> events = listener.Events;
        Assert.Equal(30, events.Count);
        Assert.All(events, e => Assert.Equal(ShapesContract, e.Contract));
        Assert.All(events, e => Assert.False(e.Failed));
        var counts = events.GroupBy(e => (e.Method, e.Side)).ToDictionary(g => g.Key, g => g.Count());
        Assert.Equal(
            new Dictionary<(string, string), int>
            {
                [("Add", "client")] = 10,
                [("Add", "server")] = 10,
                [("Echo", "client")] = 5,
                [("Echo", "server")] = 5,
            },
            counts);

        // Add(int, int): two ints in, one int out. Echo("hola"): a 4-byte length and 4 UTF-16 chars each way.
        Assert.All(events.Where(e => e.Method == "Add"), e => Assert.Equal((8, 4), (e.RequestBytes, e.ReplyBytes)));
        Assert.All(events.Where(e => e.Method == "Echo"), e => Assert.Equal((12, 12), (e.RequestBytes, e.ReplyBytes)));

        // Each side names its peer; transport time is the client's, target time the server's.
        Assert.All(events.Where(e => e.Side == "client"), e =>
        {
            Assert.Equal($"mem://{name}/server", e.Endpoint);
            Assert.True(e.TransportNanoseconds > 0, $"client transport time {e.TransportNanoseconds}");
            Assert.Equal(0, e.TargetNanoseconds);
        });
        Assert.All(events.Where(e => e.Side == "server"), e =>
        {
            Assert.Equal($"mem://{name}/client", e.Endpoint);
            Assert.Equal(0, e.TransportNanoseconds);
            Assert.True(e.TargetNanoseconds >= 0, $"server target time {e.TargetNanoseconds}");
        });
        Assert.All(events, e => Assert.True(e.MarshalNanoseconds >= 0, $"marshal time {e.MarshalNanoseconds}"));
    }

    [Fact]
    public async Task A_call_that_throws_in_the_target_is_reported_failed_on_both_sides()
    {
        string name = "failed-" + Guid.NewGuid().ToString("N");
        using var listener = new CallEventListener($"mem://{name}/");
        using (var connection = new ShapesConnection(name))
        {
            Assert.Throws<RemoteInvocationException>(() => connection.Shapes.Fail("boom"));
            await listener.WaitForAsync(2, s_timeout);
        }

        IReadOnlyList<CallEvent> events = listener.Events;
        Assert.Equal(["client", "server"], events.Select(e => e.Side).Order());
        Assert.All(events, e =>
        {
            Assert.Equal(ShapesContract, e.Contract);
            Assert.Equal("Fail", e.Method);
            Assert.True(e.Failed);
            Assert.Equal(12, e.RequestBytes);
        });
    }
}
