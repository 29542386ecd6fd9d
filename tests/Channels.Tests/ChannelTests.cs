using System.Threading.Channels;

namespace XCall.Channels.Tests;

public class ChannelTests
{
    [Fact]
    public async Task Rendezvous_write_does_not_complete_before_the_read()
    {
        var c = new One2One<int>();
        bool written = false;
        Task writer = Task.Run(async () =>
        {
            await c.Out.WriteAsync(7);
            Volatile.Write(ref written, true);
        });
        // The writer is offering its value: the channel is readable, yet the write has not returned.
        Assert.True(await c.In.AsChannelReader().WaitToReadAsync().Bounded());
        Assert.False(Volatile.Read(ref written));
        Assert.False(writer.IsCompleted);
        Assert.Equal(7, await c.In.ReadAsync().Bounded());
        await writer.Bounded();
        Assert.True(written);
    }

    [Fact]
    public async Task Rendezvous_read_waits_for_the_writer()
    {
        var c = new One2One<string>();
        ValueTask<string> read = c.In.ReadAsync();
        Assert.False(read.IsCompleted);
        Assert.True(c.Out.WriteAsync("x").IsCompletedSuccessfully);
        Assert.Equal("x", await read.Bounded());
    }

    [Fact]
    public async Task Fifo_buffer_takes_n_values_then_makes_the_writer_wait()
    {
        var c = new One2One<int>(new FifoBuffer<int>(3));
        for (int i = 0; i < 3; i++)
        {
            Assert.True(c.Out.WriteAsync(i).IsCompletedSuccessfully);
        }
        ValueTask fourth = c.Out.WriteAsync(3);
        Assert.False(fourth.IsCompleted);
        Assert.Equal(0, await c.In.ReadAsync());
        await fourth.Bounded();
        for (int i = 1; i < 4; i++)
        {
            Assert.Equal(i, await c.In.ReadAsync().Bounded());
        }
    }

    [Fact]
    public async Task Infinite_buffer_never_makes_a_writer_wait()
    {
        var c = new Any2One<int>(new InfiniteBuffer<int>());
        for (int i = 0; i < 10_000; i++)
        {
            Assert.True(c.Out.WriteAsync(i).IsCompletedSuccessfully);
        }
        for (int i = 0; i < 10_000; i++)
        {
            Assert.Equal(i, await c.In.ReadAsync());
        }
    }

    [Fact]
    public async Task Overwrite_oldest_buffer_keeps_the_newest_values()
    {
        var c = new One2One<int>(new OverwriteOldestBuffer<int>(2));
        for (int i = 1; i <= 5; i++)
        {
            c.Out.Write(i);
        }
        Assert.Equal(4, await c.In.ReadAsync());
        Assert.Equal(5, await c.In.ReadAsync());
        Assert.False(c.In.ReadAsync().IsCompleted);
    }

    private sealed class StackBuffer : IBuffer<int>
    {
        private readonly Stack<int> _items = new();

        public bool CanGet => _items.Count > 0;

        public bool CanPut => _items.Count < 3;

        public void Put(int item) => _items.Push(item);

        public int Get() => _items.Pop();
    }

    [Fact]
    public async Task User_buffer_decides_the_order()
    {
        var c = new One2One<int>(new StackBuffer());
        c.Out.Write(1);
        c.Out.Write(2);
        c.Out.Write(3);
        Assert.False(c.Out.WriteAsync(4).IsCompleted);
        Assert.Equal(3, await c.In.ReadAsync());
        Assert.Equal(4, await c.In.ReadAsync().Bounded());
        Assert.Equal(2, await c.In.ReadAsync());
    }

    [Fact]
    public async Task Extended_rendezvous_releases_the_writer_at_EndRead()
    {
        var c = new One2One<int>();
        ValueTask write = c.Out.WriteAsync(5);
        Assert.Equal(5, await c.In.BeginReadAsync().Bounded());
        Assert.False(write.IsCompleted);
        c.In.EndRead();
        await write.Bounded();

        // Reader first: the writer that serves a waiting extended read also waits for EndRead.
        ValueTask<int> begin = c.In.BeginReadAsync();
        ValueTask second = c.Out.WriteAsync(6);
        Assert.Equal(6, await begin.Bounded());
        Assert.False(second.IsCompleted);
        c.In.EndRead();
        await second.Bounded();
    }

    [Fact]
    public async Task Extended_rendezvous_on_a_shared_reader_end_runs_one_at_a_time()
    {
        var c = new Any2Any<int>();
        ValueTask w1 = c.Out.WriteAsync(1);
        ValueTask w2 = c.Out.WriteAsync(2);
        int first = await c.In.BeginReadAsync().Bounded();
        ValueTask<int> next = c.In.BeginReadAsync();
        Assert.False(next.IsCompleted);
        c.In.EndRead();
        int second = await next.Bounded();
        c.In.EndRead();
        await Task.WhenAll(w1.AsTask(), w2.AsTask()).Bounded();
        Assert.Equal([1, 2], new[] { first, second }.Order());
    }

    [Fact]
    public void One_ends_reject_a_second_waiting_process()
    {
        var c = new One2One<int>();
        _ = c.In.ReadAsync();
        Assert.Throws<InvalidOperationException>(() => c.In.ReadAsync());
        var d = new One2Any<int>();
        _ = d.Out.WriteAsync(1);
        Assert.Throws<InvalidOperationException>(() => d.Out.WriteAsync(2));
        var shared = new Any2Any<int>();
        Assert.False(shared.In.ReadAsync().IsCompleted);
        Assert.False(shared.In.ReadAsync().IsCompleted);
    }

    [Fact]
    public async Task Cancelled_read_leaves_the_channel_as_it_was()
    {
        var c = new One2One<int>();
        using var cts = new CancellationTokenSource();
        ValueTask<int> read = c.In.ReadAsync(cts.Token);
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => read.Bounded());
        Assert.False(c.Out.AsChannelWriter().TryWrite(1));
        ValueTask write = c.Out.WriteAsync(2);
        Assert.Equal(2, await c.In.ReadAsync().Bounded());
        await write.Bounded();
    }

    [Fact]
    public async Task Complete_ends_ReadAllAsync_after_every_value()
    {
        var c = new Any2One<int>();
        Task producer = Task.Run(async () =>
        {
            for (int i = 0; i < 100; i++)
            {
                await c.Out.WriteAsync(i);
            }
            c.Out.Complete();
        });
        var seen = new List<int>();
        await foreach (int v in c.In.AsChannelReader().ReadAllAsync().WithCancellation(new CancellationTokenSource(Within.Limit).Token))
        {
            seen.Add(v);
        }
        await producer.Bounded();
        Assert.Equal(Enumerable.Range(0, 100), seen);
        await Assert.ThrowsAsync<ChannelClosedException>(() => c.In.ReadAsync().Bounded());
        await Assert.ThrowsAsync<ChannelClosedException>(() => c.Out.WriteAsync(1).Bounded());
    }

    [Fact]
    public async Task Channel_writer_adapter_feeds_a_buffered_channel()
    {
        var c = new One2One<int>(new FifoBuffer<int>(4));
        ChannelWriter<int> writer = c.Out.AsChannelWriter();
        Task producer = Task.Run(async () =>
        {
            for (int i = 0; i < 50; i++)
            {
                await writer.WriteAsync(i);
            }
            writer.Complete();
        });
        int sum = 0;
        await foreach (int v in c.In.AsChannelReader().ReadAllAsync())
        {
            sum += v;
        }
        await producer.Bounded();
        Assert.Equal(Enumerable.Range(0, 50).Sum(), sum);
    }
}
