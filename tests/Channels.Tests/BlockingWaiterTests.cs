namespace XCall.Channels.Tests;

/// <summary>
/// <see cref="CspChannel{T}.BlockingWaiter"/>: the blocking forms of both ends wait through it when they cannot complete
/// at once (and are told when one needed no wait), a completion made on the waiting thread itself shows at once (no thread
/// hop), and a waiter that fails or returns early still leaves the operation waited for and its value delivered.
/// </summary>
public class BlockingWaiterTests
{
    [Fact]
    public async Task A_blocking_read_waits_through_the_waiter_which_may_complete_it_on_the_waiting_thread()
    {
        var channel = new One2One<int>();
        var waiter = new WritingWaiter<int>(channel.Out, 42);
        channel.BlockingWaiter = waiter;
        int read = 0;
        var thread = new Thread(() => read = channel.In.Read());
        thread.Start();
        await Task.Run(thread.Join).Bounded();
        Assert.Equal(42, read);
        Assert.Equal(1, waiter.Waits);
        Assert.True(waiter.CompletedWhereWritten); // the read's status showed the write made on this thread at once
    }

    [Fact]
    public async Task A_dedicated_process_thread_sees_its_own_completion_at_once()
    {
        var channel = new One2One<int>();
        var waiter = new WritingWaiter<int>(channel.Out, 7);
        channel.BlockingWaiter = waiter;
        int read = 0;
        // A ThreadProcess completes waiters asynchronously (through the pool), which must not delay what the waiter polls.
        var process = new ThreadProcess(_ => read = channel.In.Read());
        await process.RunAsync(CancellationToken.None).Bounded();
        Assert.Equal(7, read);
        Assert.True(waiter.CompletedWhereWritten);
    }

    [Fact]
    public async Task A_read_that_completes_at_once_and_the_async_forms_do_not_use_the_waiter()
    {
        var channel = new One2One<int>(new FifoBuffer<int>(4));
        var waiter = new CountingWaiter();
        channel.BlockingWaiter = waiter;
        channel.Out.Write(1);
        Assert.Equal(1, channel.In.Read());
        ValueTask<int> pending = channel.In.ReadAsync();
        Assert.False(pending.IsCompleted);
        await channel.Out.WriteAsync(2).Bounded();
        Assert.Equal(2, await pending.Bounded());
        Assert.Equal(0, waiter.Waits);
        Assert.Equal(2, waiter.AtOnce); // the blocking write and read, not the async forms
        Assert.Same(waiter, channel.BlockingWaiter);
    }

    [Fact]
    public async Task A_blocking_write_and_an_extended_read_wait_through_the_waiter()
    {
        var channel = new One2One<string>();
        var waiter = new CountingWaiter();
        channel.BlockingWaiter = waiter;
        Task writer = Task.Factory.StartNew(() => channel.Out.Write("x"), TaskCreationOptions.LongRunning);
        await Within.UntilAsync(() => waiter.Waits == 1); // no reader yet: the write waits
        Assert.Equal("x", await channel.In.ReadAsync().Bounded());
        await writer.Bounded();
        Task<string> reader = Task.Factory.StartNew(() => channel.In.BeginRead(), TaskCreationOptions.LongRunning);
        await Within.UntilAsync(() => waiter.Waits == 2);
        ValueTask write = channel.Out.WriteAsync("y");
        Assert.Equal("y", await reader.Bounded());
        Assert.False(write.IsCompleted); // the extended rendezvous holds the writer until EndRead
        channel.In.EndRead();
        await write.Bounded();
        Assert.Equal(2, waiter.Waits);
        Assert.Equal(0, waiter.AtOnce); // both waited
        Task<string> late = channel.In.ReadAsync().AsTask();
        channel.Out.Write("z"); // its reader was there: the write completes at once
        Assert.Equal("z", await late.Bounded());
        Assert.Equal(1, waiter.AtOnce);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_waiter_that_throws_or_returns_early_still_delivers_the_value(bool throws)
    {
        var channel = new One2One<int>();
        channel.BlockingWaiter = new FailingWaiter(throws);
        Task<int> reader = Task.Factory.StartNew(() => channel.In.Read(), TaskCreationOptions.LongRunning);
        await channel.Out.WriteAsync(5).Bounded();
        Assert.Equal(5, await reader.Bounded());
    }

    [Fact]
    public async Task Poison_ends_a_read_that_waits_through_the_waiter()
    {
        var channel = new One2One<int>();
        channel.BlockingWaiter = new CountingWaiter();
        Task<int> reader = Task.Factory.StartNew(() => channel.In.Read(), TaskCreationOptions.LongRunning);
        await Within.UntilAsync(() => ((CountingWaiter)channel.BlockingWaiter!).Waits == 1);
        channel.Out.Poison();
        await Assert.ThrowsAsync<PoisonException>(() => reader.Bounded());
    }

    /// <summary>Completes the operation from the waiting thread (as a layer that reads the remote writer's call there does).</summary>
    private sealed class WritingWaiter<T>(ChannelOut<T> output, T value) : IBlockingWaiter
    {
        public int Waits;
        public bool CompletedWhereWritten;

        public void Wait(IPendingOperation operation)
        {
            Waits++;
            Assert.False(operation.IsCompleted);
            Assert.True(output.WriteAsync(value).IsCompletedSuccessfully); // the reader waits: the rendezvous is made here
            CompletedWhereWritten = operation.IsCompleted;
        }
    }

    /// <summary>Waits by blocking in short slices, counting its waits and the blocking operations that needed none.</summary>
    private sealed class CountingWaiter : IBlockingWaiter
    {
        private int _waits;
        private int _atOnce;

        public int Waits => Volatile.Read(ref _waits);

        public int AtOnce => Volatile.Read(ref _atOnce);

        public void CompletedAtOnce() => Interlocked.Increment(ref _atOnce);

        public void Wait(IPendingOperation operation)
        {
            Interlocked.Increment(ref _waits);
            while (!operation.Wait(TimeSpan.FromMilliseconds(5)))
            {
            }
            Assert.True(operation.IsCompleted);
        }
    }

    private sealed class FailingWaiter(bool throws) : IBlockingWaiter
    {
        public void Wait(IPendingOperation operation)
        {
            if (throws)
            {
                throw new InvalidOperationException("a waiter that fails");
            }
        }
    }
}
