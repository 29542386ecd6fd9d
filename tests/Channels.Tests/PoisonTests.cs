namespace XCall.Channels.Tests;

public class PoisonTests
{
    [Fact]
    public async Task Poison_fails_waiting_and_later_operations()
    {
        var c = new One2One<int>();
        ValueTask<int> read = c.In.ReadAsync();
        c.Out.Poison();
        PoisonException e = await Assert.ThrowsAsync<PoisonException>(() => read.Bounded());
        Assert.Equal(1, e.Strength);
        Assert.Throws<PoisonException>(() => c.Out.Write(1));
        Assert.Throws<PoisonException>(() => c.In.Read());
    }

    [Fact]
    public async Task Immunity_ignores_poison_up_to_its_strength()
    {
        var c = new One2One<int>(immunity: 2);
        c.In.Poison(2);
        ValueTask write = c.Out.WriteAsync(1);
        Assert.Equal(1, await c.In.ReadAsync().Bounded());
        await write.Bounded();
        c.In.Poison(3);
        Assert.Equal(3, Assert.Throws<PoisonException>(() => c.Out.Write(2)).Strength);
    }

    [Fact]
    public async Task Poison_spreads_through_a_pipeline_of_processes()
    {
        const int stages = 5;
        var links = Enumerable.Range(0, stages + 1).Select(_ => new One2One<int>()).ToArray();
        var network = new Parallel();
        network.Add(Poisoning.Spreading(
            async _ =>
            {
                for (int i = 0; ; i++)
                {
                    await links[0].Out.WriteAsync(i);
                }
            },
            links[0].Out));
        for (int s = 0; s < stages; s++)
        {
            ChannelIn<int> input = links[s].In;
            ChannelOut<int> output = links[s + 1].Out;
            network.Add(Poisoning.Spreading(
                async _ =>
                {
                    while (true)
                    {
                        await output.WriteAsync(await input.ReadAsync() * 2);
                    }
                },
                input,
                output));
        }
        var received = new List<int>();
        network.Add(async _ =>
        {
            for (int i = 0; i < 10; i++)
            {
                received.Add(await links[stages].In.ReadAsync());
            }
            links[stages].In.Poison(4);
        });
        await network.RunAsync().Bounded();
        Assert.Equal(Enumerable.Range(0, 10).Select(i => i << stages), received);
        foreach (One2One<int> link in links)
        {
            Assert.Equal(4, Assert.Throws<PoisonException>(() => link.Out.Write(0)).Strength);
        }
    }

    [Fact]
    public async Task Poison_makes_guards_ready_and_the_read_throw()
    {
        var c = new One2One<int>();
        var alt = new Alternative(c.In);
        ValueTask<int> select = alt.SelectAsync();
        Assert.False(select.IsCompleted);
        c.Out.Poison();
        Assert.Equal(0, await select.Bounded());
        await Assert.ThrowsAsync<PoisonException>(() => c.In.ReadAsync().Bounded());
    }
}
