using XCall.Cluster;
using XCall.Communicator.TestApp;
using Xunit.Abstractions;

namespace XCall.Communicator.Tests;

/// <summary>Communicators whose ranks are worlds of this process, joined through a real store and talking over shared memory, one thread per rank.</summary>
public sealed class InProcessTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(120);

    internal static async Task<Communicator[]> JoinAsync(int size)
    {
        string job = $"c{Environment.ProcessId}-{Guid.NewGuid():N}"[..24];
        Task<Communicator>[] joins = [.. Enumerable.Range(0, size).Select(rank => Communicator.JoinAsync(new ClusterOptions
        {
            Environment = new WorldEnvironment
            {
                Launcher = Launcher.XCall, Rank = rank, Size = size, LocalRank = rank, Node = "node-a", OneNode = true, JobId = job,
                StoreAddress = $"shm://xcall-store-{job}",
            },
            JoinTimeout = s_hang,
        }))];
        return await Task.WhenAll(joins).WaitAsync(s_hang);
    }

    /// <summary>Runs <paramref name="body"/> for every rank on a thread of its own (ranks block in receives).</summary>
    /// <remarks>The first rank that fails fails the run at once (the others may wait for it forever).</remarks>
    internal static async Task RunRanksAsync(Communicator[] ranks, Action<Communicator> body)
    {
        List<Task> running = [.. ranks.Select(c => Task.Factory.StartNew(() => body(c), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default))];
        while (running.Count > 0)
        {
            Task ended = await Task.WhenAny(running).WaitAsync(s_hang);
            await ended;
            running.Remove(ended);
        }
    }

    internal static Task LeaveAsync(Communicator[] ranks) => Task.WhenAll(ranks.Select(c => c.DisposeAsync().AsTask())).WaitAsync(s_hang);

    [Fact]
    public async Task Leaving_the_world_fails_the_receive_and_the_probe_another_thread_waits_in()
    {
        Communicator[] ranks = await JoinAsync(2);
        Task<MessageStatus> probe;
        Task<int> receive;
        try
        {
            Mailbox mailbox = ranks[1].Messaging.Mailbox;
            receive = Task.Factory.StartNew(() => ranks[1].Receive<int>(0, 5), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            Assert.True(SpinWait.SpinUntil(() => mailbox.PostedReceives == 1 || receive.IsCompleted, s_hang), "the receive was never posted");
            Assert.False(receive.IsCompleted);
            probe = ranks[1].ProbeAsync(0, 6);
            Assert.False(probe.IsCompleted);
        }
        finally
        {
            await LeaveAsync(ranks); // within the bound: the receiving thread no longer holds the inbox
        }
        ObjectDisposedException received = await Assert.ThrowsAsync<ObjectDisposedException>(() => receive.WaitAsync(s_hang));
        Assert.Contains("left its world", received.Message);
        await Assert.ThrowsAsync<ObjectDisposedException>(() => probe.WaitAsync(s_hang));
        Assert.Throws<ObjectDisposedException>(() => ranks[1].Receive<int>(0, 5)); // and every later receive
    }

    [Fact]
    public async Task A_large_send_to_a_rank_that_leaves_without_receiving_it_ends()
    {
        // Rank 0 lends rank 1 a message of 1 MiB (a receive would copy it from rank 0's memory) and waits for the answer;
        // rank 1 leaves its world without receiving it. The send ends while rank 1 is leaving (its leave then waits for
        // rank 0's, as every leave waits for the world's), with the copy rank 1 took or a clear error, never waiting on.
        Communicator[] ranks = await JoinAsync(2);
        Task? leaving = null;
        try
        {
            byte[] large = new byte[1 << 20];
            Task send = Task.Factory.StartNew(() => ranks[0].Send(large, 1, 9), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            Assert.True(SpinWait.SpinUntil(() => ranks[0].Messaging.LentTo(1) == 1 || send.IsCompleted, s_hang), "the message was never lent");
            leaving = ranks[1].DisposeAsync().AsTask();
            Exception? error = await Record.ExceptionAsync(() => send.WaitAsync(s_hang));
            Assert.IsNotType<TimeoutException>(error);
            Assert.False(leaving.IsCompleted, "rank 1 left before the send ended: the send waited for the whole world's leave");
            output.WriteLine(error?.ToString() ?? "the send returned");
        }
        finally
        {
            await ranks[0].DisposeAsync().AsTask().WaitAsync(s_hang);
            await (leaving ?? ranks[1].DisposeAsync().AsTask()).WaitAsync(s_hang);
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(6)]
    [InlineData(7)]
    [InlineData(8)]
    public async Task Every_check_passes_on_every_rank(int size)
    {
        Communicator[] ranks = await JoinAsync(size);
        var log = new List<string>();
        try
        {
            await RunRanksAsync(ranks, c => CommunicatorChecks.Run(c, line =>
            {
                lock (log)
                {
                    log.Add(line);
                }
            }));
        }
        catch (Exception e)
        {
            output.WriteLine($"A rank failed: {e}"); // the leave below fails the ranks still waiting for it
            throw;
        }
        finally
        {
            output.WriteLine(string.Join("\n", log));
            await LeaveAsync(ranks);
        }
        Assert.Equal(size * 15, log.Count); // every rank passed every check
    }

    [Fact]
    public async Task Bad_arguments_fail_with_clear_exceptions_and_lose_nothing()
    {
        Communicator[] ranks = await JoinAsync(2);
        try
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => ranks[0].Send(1, 2, 0));
            Assert.Throws<ArgumentOutOfRangeException>(() => ranks[0].Send(1, 1, -1));
            Assert.Throws<ArgumentOutOfRangeException>(() => ranks[0].Receive<int>(5, 0));
            Assert.Throws<ArgumentException>(() => ranks[0].Allreduce(new int[3], new int[2], ReduceOperation.Sum<int>()));
            ranks[0].Send(42, 1, 0);
            Assert.Equal(42, ranks[1].Receive<int>(0, 0));
            await Assert.ThrowsAsync<ArgumentException>(() => Communicator.JoinAsync(new ClusterOptions { Services = new XCallServer() }));
        }
        finally
        {
            await LeaveAsync(ranks);
        }
    }
}
