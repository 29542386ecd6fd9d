using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Transport;

namespace XCall.Tests;

/// <summary>
/// <see cref="XCallConnection.WaitReceiving(IReplyWait, TimeSpan, object?)"/> and <see cref="XCallConnection.Current"/> over shared memory and TCP: a
/// server thread waits on the connection a client's one-way calls come over, for a condition those calls end.
/// </summary>
public sealed class WaitReceivingTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task A_thread_waiting_on_a_connection_gets_the_one_way_calls_that_end_its_wait(string transport)
    {
        using var world = InlineServer(transport);
        (RecordingShapes shapes, XCallServer server, RemoteService<IShapes> client) = (world.Shapes, world.Server, world.Client);
        MessageWait first = shapes.Expect("first");
        client.Proxy.Post("first");
        XCallConnection link = await first.Connection.WaitAsync(Patience);
        Assert.Contains(link, server.Connections);

        for (int i = 0; i < 50; i++)
        {
            MessageWait next = shapes.Expect($"m{i}");
            Task post = Task.Run(() => client.Proxy.Post($"m{i}"));
            Assert.True(await Task.Run(() => link.WaitReceiving(next, Patience)));
            Assert.True(((IReplyWait)next).IsCompleted);
            Assert.Same(link, await next.Connection);
            await post;
        }
        Assert.Null(XCallConnection.Current); // no call runs on the test's thread
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task A_wait_times_out_and_a_call_on_the_reading_thread_cannot_wait_on_its_own_connection(string transport)
    {
        using var world = InlineServer(transport);
        (RecordingShapes shapes, RemoteService<IShapes> client) = (world.Shapes, world.Client);
        MessageWait nested = shapes.Expect(RecordingShapes.WaitInside);
        client.Proxy.Post(RecordingShapes.WaitInside);
        XCallConnection link = await nested.Connection.WaitAsync(Patience);
        InvalidOperationException refused = Assert.IsType<InvalidOperationException>(await shapes.InsideFailure.Task.WaitAsync(Patience));
        Assert.Contains("reads its frames", refused.Message);

        MessageWait never = shapes.Expect("never sent");
        Assert.False(await Task.Run(() => link.WaitReceiving(never, TimeSpan.FromMilliseconds(50))));
        Assert.Throws<ArgumentOutOfRangeException>(() => link.WaitReceiving(never, TimeSpan.FromSeconds(-2)));

        // The connection serves on after the wait gave up.
        MessageWait after = shapes.Expect("after");
        client.Proxy.Post("after");
        Assert.Same(link, await after.Connection.WaitAsync(Patience));
    }

    /// <summary>A server of <see cref="RecordingShapes"/> that runs calls inline, and a client of it over <c>transport</c>.</summary>
    private static ServedShapes<RecordingShapes> InlineServer(string transport) =>
        new(new RecordingShapes(), ConnectionOptions.Default with { DispatchMode = DispatchMode.Inline }, transport, "waitrecv");

    /// <summary>Shapes whose one-way <see cref="IShapes.Post"/> ends the <see cref="MessageWait"/> of its message.</summary>
    private sealed class RecordingShapes : Shapes, IShapes
    {
        public const string WaitInside = "wait inside";

        private MessageWait? _expected;

        public TaskCompletionSource<Exception> InsideFailure { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public MessageWait Expect(string message)
        {
            var wait = new MessageWait(message);
            Volatile.Write(ref _expected, wait);
            return wait;
        }

        public new void Post(string message)
        {
            if (message == WaitInside)
            {
                try
                {
                    XCallConnection.Current!.WaitReceiving(new MessageWait("not coming"), TimeSpan.FromSeconds(1));
                }
                catch (Exception e)
                {
                    InsideFailure.TrySetResult(e);
                }
            }
            Volatile.Read(ref _expected)?.Arrived(message);
        }
    }

    /// <summary>A wait for one message; it records the connection the message's call came over.</summary>
    private sealed class MessageWait(string message) : IReplyWait
    {
        private readonly TaskCompletionSource<XCallConnection> _connection = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly ManualResetEventSlim _arrived = new();

        public Task<XCallConnection> Connection => _connection.Task;

        bool IReplyWait.IsCompleted => _arrived.IsSet;

        bool IReplyWait.WaitOver => _arrived.IsSet;

        bool IReplyWait.IsNested => false;

        bool IReplyWait.Wait(long deadline) =>
            _arrived.Wait(deadline == long.MaxValue ? Timeout.Infinite : (int)Math.Clamp(deadline - Environment.TickCount64, 0, int.MaxValue));

        public void Arrived(string posted)
        {
            if (posted == message)
            {
                _connection.TrySetResult(XCallConnection.Current!);
                _arrived.Set();
            }
        }
    }
}
