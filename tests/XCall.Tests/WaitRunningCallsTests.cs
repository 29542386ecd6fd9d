using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Transport;

namespace XCall.Tests;

/// <summary>
/// <see cref="XCallConnection.WaitReceiving(IReplyWait, TimeSpan, object?)"/> with an object to run calls to, on a server
/// with the default (concurrent) dispatch: over shared memory a call to that object read by the waiting thread runs on
/// it and ends its wait; one-way calls and calls to other objects keep their way; over TCP the wait ends as well.
/// </summary>
public sealed class WaitRunningCallsTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task A_call_to_the_named_object_read_by_the_waiting_thread_runs_there_and_ends_the_wait(string transport)
    {
        using var world = ConcurrentServer(transport);
        XCallConnection link = await LinkAsync(world);
        int ranOnWaiter = 0;
        for (int i = 0; i < 50; i++)
        {
            CallWait wait = world.Shapes.Expect(i);
            (Task<bool> waiting, int waiter) = await StartWaitingAsync(link, wait, world.Shapes);
            Assert.Equal(i + 1, world.Client.Proxy.Add(i, 1));
            Assert.True(await waiting.WaitAsync(Patience));
            if (await wait.RanOn == waiter)
            {
                ranOnWaiter++;
            }
        }
        if (transport == "shm")
        {
            // The waiting thread reads the ring once it holds the receiving, which the receive thread may still hold when
            // the call comes (then the call runs there): how many run on the waiter varies, none would mean no call ever does.
            Assert.True(ranOnWaiter >= 1, $"{ranOnWaiter} of 50 calls ran on the waiting thread");
        }
    }

    [Fact]
    public async Task A_call_run_on_the_waiting_thread_runs_where_its_frame_was_read()
    {
        using var world = ConcurrentServer("shm");
        XCallConnection link = await LinkAsync(world);
        world.Shapes.ProbesWaits = true;
        for (int i = 0; i < 50; i++)
        {
            CallWait wait = world.Shapes.Expect(i);
            (Task<bool> waiting, int waiter) = await StartWaitingAsync(link, wait, world.Shapes);
            wait.Waiter = waiter;
            Assert.Equal(i + 1, world.Client.Proxy.Add(i, 1));
            Assert.True(await waiting.WaitAsync(Patience));
        }
        world.Shapes.ProbesWaits = false;
        (int Thread, bool Refused, bool Waiter)[] probes = [.. world.Shapes.WaitProbes];
        // The waiting thread still holds the receiving while the call runs: a wait on the connection inside the call, which
        // would need the frames only that thread reads, is refused at once. A call the receive thread read (it may still
        // hold the receiving when the call comes) runs detached there, and its wait is a plain one.
        Assert.Contains(probes, p => p.Waiter);
        Assert.All(probes.Where(p => p.Waiter), p => Assert.True(p.Refused, $"a call on the waiting thread {p.Thread} waited on the connection"));
        Assert.All(probes.Where(p => !p.Waiter), p => Assert.False(p.Refused, $"a call on thread {p.Thread} was refused a wait"));
        Assert.Equal(3, world.Client.Proxy.Add(1, 2));
    }

    [Fact]
    public async Task One_way_calls_and_calls_to_other_objects_do_not_run_on_the_waiting_thread()
    {
        using var world = ConcurrentServer("shm");
        XCallConnection link = await LinkAsync(world);

        // One-way calls to the named object keep their way.
        CallWait wait = world.Shapes.Expect(-1);
        (Task<bool> waiting, int waiter) = await StartWaitingAsync(link, wait, world.Shapes);
        for (int i = 0; i < 20; i++)
        {
            world.Client.Proxy.Post($"{i}");
        }
        for (int i = 0; i < 20; i++)
        {
            Assert.True(await world.Shapes.PostsRun.WaitAsync(Patience));
        }
        Assert.False(waiting.IsCompleted);
        Assert.Equal(0, world.Client.Proxy.Add(-1, 1)); // the call the wait is for
        Assert.True(await waiting.WaitAsync(Patience));
        Assert.DoesNotContain(waiter, world.Shapes.PostThreads);

        // Two-way calls to an object the wait does not name keep theirs, and one of them ends the wait elsewhere.
        var unnamed = new object();
        CallWait other = world.Shapes.Expect(-2);
        (Task<bool> waitingOther, int otherWaiter) = await StartWaitingAsync(link, other, unnamed);
        for (int i = 0; i < 20; i++)
        {
            Assert.Equal(i + 1, world.Client.Proxy.Add(i, 1));
        }
        Assert.Equal(-1, world.Client.Proxy.Add(-2, 1));
        Assert.True(await waitingOther.WaitAsync(Patience));
        Assert.NotEqual(otherWaiter, await other.RanOn);
        Assert.DoesNotContain(otherWaiter, world.Shapes.AddThreads);
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task A_waiting_thread_runs_at_most_two_calls_that_leave_its_wait_on_and_still_sees_its_own(string transport)
    {
        using var world = ConcurrentServer(transport);
        XCallConnection link = await LinkAsync(world);
        for (int round = 0; round < 5; round++)
        {
            CallWait wait = world.Shapes.Expect(-7, comesBack: true); // as a channel's reader says
            (Task<bool> waiting, int waiter) = await StartWaitingAsync(link, wait, world.Shapes);
            world.Shapes.AddThreads.Clear();
            // Calls to the named object that are not the one the wait is for (another channel's traffic, say).
            for (int i = 0; i < 200; i++)
            {
                Assert.Equal(i + 1, world.Client.Proxy.Add(i, 1));
            }
            int ranOnWaiter = world.Shapes.AddThreads.Count(t => t == waiter);
            Assert.False(waiting.IsCompleted);
            Assert.Equal(-6, world.Client.Proxy.Add(-7, 1));
            Assert.True(await waiting.WaitAsync(Patience));
            Assert.True(ranOnWaiter <= 2, $"round {round}: {ranOnWaiter} of 200 calls that left the wait on ran on the waiting thread");
        }

        // A wait that blocked after its misses still times out on its deadline, and the connection serves on.
        CallWait never = world.Shapes.Expect(-9, comesBack: true);
        (Task<bool> timed, _) = await StartWaitingAsync(link, never, world.Shapes, TimeSpan.FromMilliseconds(300));
        for (int i = 0; i < 20; i++)
        {
            Assert.Equal(i + 1, world.Client.Proxy.Add(i, 1));
        }
        Assert.False(await timed.WaitAsync(Patience));
        Assert.Equal(3, world.Client.Proxy.Add(1, 2));
    }

    [Fact]
    public async Task A_wait_ended_by_another_thread_returns_and_the_connection_serves_on()
    {
        using var world = ConcurrentServer("shm");
        XCallConnection link = await LinkAsync(world);
        CallWait wait = world.Shapes.Expect(-5);
        Task<bool> waiting = Task.Factory.StartNew(() => link.WaitReceiving(wait, Patience, world.Shapes), TaskCreationOptions.LongRunning);
        wait.End(Environment.CurrentManagedThreadId);
        Assert.True(await waiting.WaitAsync(Patience));
        Assert.Equal(3, world.Client.Proxy.Add(1, 2));
        Assert.False(link.WaitReceiving(world.Shapes.Expect(-6), TimeSpan.FromMilliseconds(50), world.Shapes));
        Assert.Equal(5, world.Client.Proxy.Add(2, 3));
    }

    /// <summary>Starts <paramref name="wait"/> on a thread of its own, running calls to <paramref name="runsCallsTo"/>, for
    /// <paramref name="timeout"/> (by default <see cref="Patience"/>); the wait and its thread's id, once it started.</summary>
    private static async Task<(Task<bool> Waiting, int Waiter)> StartWaitingAsync(XCallConnection link, CallWait wait, object runsCallsTo, TimeSpan? timeout = null)
    {
        var started = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        Task<bool> waiting = Task.Factory.StartNew(() =>
        {
            started.SetResult(Environment.CurrentManagedThreadId);
            return link.WaitReceiving(wait, timeout ?? Patience, runsCallsTo);
        }, TaskCreationOptions.LongRunning);
        return (waiting, await started.Task);
    }

    /// <summary>A server with default options serving <see cref="RecordingShapes"/>, and a client of it over <c>transport</c>.</summary>
    private static ServedShapes<RecordingShapes> ConcurrentServer(string transport) => new(new RecordingShapes(), null, transport, "waitcalls");

    /// <summary>The server's end of the client's connection, learned from a call.</summary>
    private static async Task<XCallConnection> LinkAsync(ServedShapes<RecordingShapes> world)
    {
        CallWait first = world.Shapes.Expect(-100);
        Assert.Equal(-99, world.Client.Proxy.Add(-100, 1));
        return await first.Connection.WaitAsync(Patience);
    }

    /// <summary>Shapes whose <see cref="IShapes.Add(int, int)"/> ends the <see cref="CallWait"/> of its first argument.</summary>
    private sealed class RecordingShapes : Shapes, IShapes
    {
        private CallWait? _expected;

        public System.Collections.Concurrent.ConcurrentBag<int> AddThreads { get; } = [];

        public System.Collections.Concurrent.ConcurrentBag<int> PostThreads { get; } = [];

        /// <summary>Released once per <see cref="IShapes.Post"/>, after its thread is recorded.</summary>
        public SemaphoreSlim PostsRun { get; } = new(0);

        public CallWait Expect(int a, bool comesBack = false)
        {
            var wait = new CallWait(a, comesBack);
            Volatile.Write(ref _expected, wait);
            return wait;
        }

        /// <summary>While set, <see cref="IShapes.Add(int, int)"/> tries a wait on the connection it came over and records
        /// whether it was refused (<see cref="WaitProbes"/>).</summary>
        public bool ProbesWaits { get; set; }

        /// <summary>The thread each probing call ran on, whether its wait was refused, and whether it ran on the thread of
        /// the wait it ended.</summary>
        public System.Collections.Concurrent.ConcurrentBag<(int Thread, bool Refused, bool Waiter)> WaitProbes { get; } = [];

        public new int Add(int a, int b)
        {
            AddThreads.Add(Environment.CurrentManagedThreadId);
            if (ProbesWaits)
            {
                bool refused = false;
                try
                {
                    XCallConnection.Current!.WaitReceiving(new CallWait(int.MinValue), TimeSpan.Zero);
                }
                catch (InvalidOperationException)
                {
                    refused = true;
                }
                CallWait? expected = Volatile.Read(ref _expected);
                WaitProbes.Add((Environment.CurrentManagedThreadId, refused, expected is not null && expected.Waiter == Environment.CurrentManagedThreadId));
            }
            Volatile.Read(ref _expected)?.Called(a);
            return a + b;
        }

        public new void Post(string message)
        {
            PostThreads.Add(Environment.CurrentManagedThreadId);
            PostsRun.Release();
        }
    }

    /// <summary>A wait for one call; it records the thread the call ran on and the connection it came over, and says it
    /// comes back (as a channel's reader does) when <c>comesBack</c>.</summary>
    private sealed class CallWait(int a, bool comesBack = false) : IReplyWait
    {
        private readonly TaskCompletionSource<int> _ranOn = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource<XCallConnection> _connection = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly ManualResetEventSlim _over = new();

        public Task<int> RanOn => _ranOn.Task;

        /// <summary>The thread that waits (set by the test once it started).</summary>
        public int Waiter { get; set; }

        public Task<XCallConnection> Connection => _connection.Task;

        bool IReplyWait.IsCompleted => _over.IsSet;

        bool IReplyWait.WaitOver => _over.IsSet;

        bool IReplyWait.IsNested => false;

        bool IReplyWait.ComesBack => comesBack;

        bool IReplyWait.Wait(long deadline) =>
            _over.Wait(deadline == long.MaxValue ? Timeout.Infinite : (int)Math.Clamp(deadline - Environment.TickCount64, 0, int.MaxValue));

        public void Called(int called)
        {
            if (called == a)
            {
                _connection.TrySetResult(XCallConnection.Current!);
                End(Environment.CurrentManagedThreadId);
            }
        }

        public void End(int thread)
        {
            _ranOn.TrySetResult(thread);
            _over.Set();
        }
    }
}
