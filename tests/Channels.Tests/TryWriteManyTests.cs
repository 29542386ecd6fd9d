namespace XCall.Channels.Tests;

public class TryWriteManyTests
{
    [Fact]
    public async Task Fills_the_buffer_in_order_and_returns_how_many_it_took()
    {
        var c = new One2One<int>(new FifoBuffer<int>(3));
        Assert.Equal(3, c.Out.TryWriteMany([10, 11, 12, 13, 14]));
        Assert.Equal(0, c.Out.TryWriteMany([13, 14]));
        Assert.Equal(10, await c.In.ReadAsync().Bounded());
        Assert.Equal(1, c.Out.TryWriteMany([13, 14]));
        for (int expected = 11; expected <= 13; expected++)
        {
            Assert.Equal(expected, await c.In.ReadAsync().Bounded());
        }
        Assert.False(c.In.ReadAsync().IsCompleted);
    }

    [Fact]
    public async Task A_waiting_reader_takes_the_first_value_and_the_buffer_the_next()
    {
        var c = new One2One<int>(new FifoBuffer<int>(2));
        ValueTask<int> read = c.In.ReadAsync();
        Assert.False(read.IsCompleted);
        Assert.Equal(3, c.Out.TryWriteMany([1, 2, 3, 4]));
        Assert.Equal(1, await read.Bounded());
        Assert.Equal(2, await c.In.ReadAsync().Bounded());
        Assert.Equal(3, await c.In.ReadAsync().Bounded());
    }

    [Fact]
    public async Task On_a_rendezvous_channel_only_a_waiting_reader_takes_a_value()
    {
        var c = new One2One<string>();
        Assert.Equal(0, c.Out.TryWriteMany(["a", "b"]));
        ValueTask<string> read = c.In.ReadAsync();
        Assert.Equal(1, c.Out.TryWriteMany(["a", "b"]));
        Assert.Equal("a", await read.Bounded());
    }

    [Fact]
    public async Task Values_of_waiting_writers_go_first()
    {
        var c = new One2One<int>(new FifoBuffer<int>(1));
        Assert.True(c.Out.WriteAsync(1).IsCompletedSuccessfully);
        ValueTask second = c.Out.WriteAsync(2);
        Assert.False(second.IsCompleted);
        Assert.Equal(0, c.Out.TryWriteMany([3]));
        Assert.Equal(1, await c.In.ReadAsync().Bounded());
        await second.Bounded();
        Assert.Equal(2, await c.In.ReadAsync().Bounded());
    }

    [Fact]
    public void A_completed_channel_takes_none_and_a_poisoned_one_throws()
    {
        var completed = new One2One<int>(new FifoBuffer<int>(4));
        completed.Out.Complete();
        Assert.Equal(0, completed.Out.TryWriteMany([1, 2]));
        var poisoned = new One2One<int>(new FifoBuffer<int>(4));
        poisoned.Out.Poison(3);
        Assert.Equal(3, Assert.Throws<PoisonException>(() => poisoned.Out.TryWriteMany([1])).Strength);
    }

    [Fact]
    public async Task A_selecting_reader_hears_of_the_values()
    {
        var c = new One2One<int>(new FifoBuffer<int>(8));
        var alternative = new Alternative(c.In);
        ValueTask<int> select = alternative.FairSelectAsync();
        Assert.False(select.IsCompleted);
        Assert.Equal(2, c.Out.TryWriteMany([5, 6]));
        Assert.Equal(0, await select.Bounded());
        Assert.Equal(5, await c.In.ReadAsync().Bounded());
    }
}
