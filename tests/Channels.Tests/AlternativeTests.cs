using System.Diagnostics;

namespace XCall.Channels.Tests;

public class AlternativeTests
{
    private static One2One<int> Filled(int count)
    {
        var c = new One2One<int>(new InfiniteBuffer<int>());
        for (int i = 0; i < count; i++)
        {
            c.Out.Write(i);
        }
        return c;
    }

    [Fact]
    public async Task FairSelect_chooses_every_ready_guard_within_n_selections()
    {
        const int n = 4;
        const int rounds = 500;
        One2One<int>[] channels = [.. Enumerable.Range(0, n).Select(_ => Filled(rounds))];
        var alt = new Alternative([.. channels.Select(c => c.In)]);
        var chosen = new List<int>();
        for (int r = 0; r < rounds; r++)
        {
            int i = await alt.FairSelectAsync();
            await channels[i].In.ReadAsync();
            chosen.Add(i);
        }
        for (int start = 0; start + n <= rounds; start++)
        {
            Assert.Equal(n, chosen.Skip(start).Take(n).Distinct().Count());
        }
    }

    [Fact]
    public async Task FairSelect_serves_live_writers_evenly()
    {
        const int perWriter = 300;
        One2One<int>[] channels = [new(), new(), new()];
        var alt = new Alternative([.. channels.Select(c => c.In)]);
        var counts = new int[channels.Length];
        var writers = channels.Select(c => Task.Run(async () =>
        {
            for (int i = 0; i < perWriter; i++)
            {
                await c.Out.WriteAsync(i);
            }
        })).ToArray();
        for (int r = 0; r < perWriter * channels.Length; r++)
        {
            int i = await alt.FairSelectAsync().Bounded();
            Assert.Equal(counts[i], await channels[i].In.ReadAsync().Bounded());
            counts[i]++;
        }
        await Task.WhenAll(writers).Bounded();
        Assert.All(counts, c => Assert.Equal(perWriter, c));
    }

    [Fact]
    public async Task PriSelect_takes_the_first_ready_guard_in_order()
    {
        One2One<int> high = Filled(3);
        One2One<int> low = Filled(3);
        var alt = new Alternative(high.In, low.In);
        for (int r = 0; r < 3; r++)
        {
            Assert.Equal(0, await alt.PriSelectAsync());
            await high.In.ReadAsync();
        }
        Assert.Equal(1, await alt.PriSelectAsync());
        Assert.Equal(1, alt.PriSelect([false, true]));
    }

    [Fact]
    public async Task PriSelect_order_holds_across_buffered_and_unbuffered_ready_guards()
    {
        // The first look reads an unbuffered channel without its lock and a buffered one under it:
        // both answer in select order, so an earlier ready guard of either kind wins.
        One2One<int> buffered = Filled(1);
        var unbuffered = new One2One<int>();
        ValueTask offer = unbuffered.Out.WriteAsync(7);
        var alt = new Alternative(buffered.In, unbuffered.In);
        Assert.Equal(0, await alt.PriSelectAsync());
        Assert.Equal(0, await buffered.In.ReadAsync());
        Assert.Equal(1, await alt.PriSelectAsync());
        Assert.Equal(7, await unbuffered.In.ReadAsync().Bounded());
        await offer.Bounded();

        var late = new Alternative(unbuffered.In, buffered.In);
        ValueTask second = unbuffered.Out.WriteAsync(8);
        buffered.Out.Write(9);
        Assert.Equal(0, await late.PriSelectAsync());
        Assert.Equal(8, await unbuffered.In.ReadAsync().Bounded());
        await second.Bounded();
        Assert.Equal(1, await late.PriSelectAsync());
    }

    [Fact]
    public async Task Select_never_chooses_a_guard_that_is_not_ready()
    {
        var empty = new One2One<int>();
        One2One<int> full = Filled(100);
        var alt = new Alternative(empty.In, full.In);
        for (int r = 0; r < 100; r++)
        {
            Assert.Equal(1, await alt.SelectAsync());
            await full.In.ReadAsync();
        }
    }

    [Fact]
    public async Task Pre_conditions_remove_guards_from_a_select()
    {
        One2One<int> a = Filled(1);
        One2One<int> b = Filled(1);
        var alt = new Alternative(a.In, b.In, new Skip());
        Assert.Equal(1, await alt.PriSelectAsync([false, true, true]));
        Assert.Equal(2, await alt.PriSelectAsync([false, false, true]));
        Assert.Throws<InvalidOperationException>(() => alt.PriSelect([false, false, false]));
    }

    [Fact]
    public async Task Relative_timer_fires_after_its_delay_when_nothing_else_is_ready()
    {
        var c = new One2One<int>();
        var timer = new CSTimer();
        var alt = new Alternative(c.In, timer);
        var clock = Stopwatch.StartNew();
        timer.RelativeTimeout(TimeSpan.FromMilliseconds(60));
        Assert.Equal(1, await alt.FairSelectAsync().Bounded());
        Assert.True(clock.ElapsedMilliseconds >= 55, $"fired after {clock.ElapsedMilliseconds} ms");
        Assert.True(timer.Now >= timer.Alarm);
    }

    [Fact]
    public async Task Absolute_timer_in_the_past_is_ready_and_a_channel_beats_a_late_timer()
    {
        var timer = new CSTimer();
        timer.AbsoluteTimeout(timer.Now - 1);
        Assert.Equal(0, await new Alternative(timer).SelectAsync());

        var c = new One2One<int>();
        timer.AbsoluteTimeout(timer.Now + 60_000);
        var alt = new Alternative(c.In, timer);
        ValueTask<int> select = alt.PriSelectAsync();
        Assert.False(select.IsCompleted);
        ValueTask write = c.Out.WriteAsync(3);
        Assert.Equal(0, await select.Bounded());
        Assert.Equal(3, await c.In.ReadAsync());
        await write.Bounded();
    }

    [Fact]
    public async Task Output_guard_is_ready_when_a_reader_waits()
    {
        var c = new One2One<int>();
        var alt = new Alternative(c.Out, new Skip());
        Assert.Equal(1, await alt.PriSelectAsync());

        var waiting = new Alternative(c.Out);
        ValueTask<int> select = waiting.SelectAsync();
        Assert.False(select.IsCompleted);
        ValueTask<int> read = c.In.ReadAsync();
        Assert.Equal(0, await select.Bounded());
        // The reader still waits, so the write after the select completes at once.
        Assert.True(c.Out.WriteAsync(42).IsCompletedSuccessfully);
        Assert.Equal(42, await read.Bounded());
    }

    [Fact]
    public void Shared_ends_cannot_be_guards()
    {
        Assert.Throws<InvalidOperationException>(() => new Alternative(new One2Any<int>().In).PriSelect());
        Assert.Throws<InvalidOperationException>(() => new Alternative(new Any2One<int>().Out).PriSelect());
    }

    [Fact]
    public async Task Every_value_is_read_once_when_many_writers_race_a_selecting_reader()
    {
        const int writersPerChannel = 4;
        const int values = 500;
        Any2One<int>[] channels = [new(), new()];
        var alt = new Alternative(channels[0].In, channels[1].In);
        var writers = new List<Func<CancellationToken, Task>>();
        foreach (Any2One<int> c in channels)
        {
            for (int w = 0; w < writersPerChannel; w++)
            {
                writers.Add(async _ =>
                {
                    for (int i = 1; i <= values; i++)
                    {
                        await c.Out.WriteAsync(i);
                    }
                });
            }
        }
        long sum = 0;
        writers.Add(async _ =>
        {
            for (int r = 0; r < channels.Length * writersPerChannel * values; r++)
            {
                sum += await channels[await alt.FairSelectAsync()].In.ReadAsync();
            }
        });
        await new Parallel(writers).RunAsync().Bounded();
        Assert.Equal(channels.Length * writersPerChannel * (values * (values + 1L) / 2), sum);
    }

    [Fact]
    public async Task Blocking_AltReader_on_a_thread_ends_on_its_timer()
    {
        var plus = new One2One<int>();
        var minus = new One2One<int>();
        int result = int.MinValue;
        var reader = new ThreadProcess(_ =>
        {
            var timer = new CSTimer();
            var alt = new Alternative(plus.In, minus.In, timer);
            int total = 0;
            while (true)
            {
                // Silence ends the reader, as in CSP.NET's listing 5 (two seconds here, not one, so that a
                // machine busy with other test assemblies cannot stall a writer thread that long).
                timer.RelativeTimeout(2000);
                switch (alt.FairSelect())
                {
                    case 0: total += plus.In.Read(); break;
                    case 1: total -= minus.In.Read(); break;
                    default:
                        result = total;
                        // A writer still blocked (only if its thread stalled for the whole silence) ends instead of hanging.
                        plus.In.Poison();
                        minus.In.Poison();
                        return;
                }
            }
        });
        // The writers block on their own threads too: pool threads can be scarce while other tests block theirs.
        ThreadProcess Adder(One2One<int> c, int value) => new(_ =>
        {
            for (int i = 0; i < 100; i++)
            {
                c.Out.Write(value);
            }
        });
        await new Parallel(reader, new Parallel(Adder(plus, 3), Adder(minus, 1))).RunAsync().Bounded();
        Assert.Equal(200, result);
    }

    [Fact]
    public async Task Cancelled_select_leaves_the_alternative_usable()
    {
        var c = new One2One<int>();
        var alt = new Alternative(c.In);
        using var cts = new CancellationTokenSource();
        ValueTask<int> select = alt.SelectAsync(cts.Token);
        Assert.Throws<InvalidOperationException>(() => alt.PriSelect());
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => select.Bounded());
        ValueTask write = c.Out.WriteAsync(9);
        Assert.Equal(0, await alt.SelectAsync().Bounded());
        Assert.Equal(9, await c.In.ReadAsync());
        await write.Bounded();
    }
}
