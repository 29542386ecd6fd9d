using Parallel = XCall.Channels.Parallel;

namespace XCall.Channels.Tests;

public class ProcessTests
{
    [Fact]
    public async Task Parallel_reports_every_failure_and_cancels_the_rest()
    {
        var bothThrow = new Barrier(2);
        var never = new One2One<int>();
        bool cancelled = false;
        var run = new Parallel(
            async _ =>
            {
                await bothThrow.SyncAsync();
                throw new InvalidOperationException("first");
            },
            async _ =>
            {
                await bothThrow.SyncAsync();
                throw new ArgumentException("second");
            },
            async token =>
            {
                try
                {
                    await never.In.ReadAsync(token);
                }
                catch (OperationCanceledException)
                {
                    cancelled = true;
                    throw;
                }
            }).RunAsync();
        AggregateException error = await Assert.ThrowsAsync<AggregateException>(() => run.Bounded());
        Assert.Equal(2, error.InnerExceptions.Count);
        Assert.Contains(error.InnerExceptions, e => e is InvalidOperationException { Message: "first" });
        Assert.Contains(error.InnerExceptions, e => e is ArgumentException { Message: "second" });
        Assert.True(cancelled);
    }

    [Fact]
    public async Task Blocking_thread_process_and_100_000_lightweight_processes_share_channels()
    {
        const int count = 100_000;
        var toThread = new Any2One<int>();
        var fromThread = new One2One<long>();
        long total = 0;
        bool onPool = true;
        var processes = new List<IProcess>
        {
            new ThreadProcess(
                _ =>
                {
                    onPool = Thread.CurrentThread.IsThreadPoolThread;
                    long sum = 0;
                    for (int i = 0; i < count; i++)
                    {
                        sum += toThread.In.Read();
                    }
                    fromThread.Out.Write(sum);
                },
                maxStackSize: 256 * 1024),
            new Parallel(async _ => total = await fromThread.In.ReadAsync()),
        };
        var writers = new Parallel();
        for (int i = 1; i <= count; i++)
        {
            int value = i;
            writers.Add(async _ => await toThread.Out.WriteAsync(value));
        }
        processes.Add(writers);
        await new Parallel(processes).RunAsync().Bounded();
        Assert.Equal(count * (count + 1L) / 2, total);
        Assert.False(onPool);
    }

    [Fact]
    public async Task Ring_of_lightweight_processes_passes_a_token_round_many_times()
    {
        const int n = 10_000;
        const int laps = 10;
        var links = new One2One<int>[n + 1];
        for (int i = 0; i <= n; i++)
        {
            links[i] = new One2One<int>();
        }
        var ring = new Parallel();
        for (int i = 0; i < n; i++)
        {
            ChannelIn<int> input = links[i].In;
            ChannelOut<int> output = links[i + 1].Out;
            ring.Add(async _ =>
            {
                for (int lap = 0; lap < laps; lap++)
                {
                    await output.WriteAsync(await input.ReadAsync() + 1);
                }
            });
        }
        int last = -1;
        ring.Add(async _ =>
        {
            int token = 0;
            for (int lap = 0; lap < laps; lap++)
            {
                await links[0].Out.WriteAsync(token);
                token = await links[n].In.ReadAsync();
            }
            last = token;
        });
        await ring.RunAsync().Bounded();
        Assert.Equal(n * laps, last);
    }

    [Fact]
    public async Task PriParallel_gives_thread_processes_descending_priorities()
    {
        var first = new ThreadProcess(_ => { });
        var second = new ThreadProcess(_ => { });
        bool ran = false;
        await new PriParallel(first, second, new Parallel(_ => { ran = true; return Task.CompletedTask; })).RunAsync().Bounded();
        Assert.Equal(ThreadPriority.Highest, first.Priority);
        Assert.Equal(ThreadPriority.AboveNormal, second.Priority);
        Assert.True(ran);
    }

    [Fact]
    public async Task Outer_cancellation_stops_a_parallel()
    {
        var never = new Any2Any<int>();
        using var cts = new CancellationTokenSource();
        Task run = new Parallel(t => never.In.ReadAsync(t).AsTask(), t => never.In.ReadAsync(t).AsTask()).RunAsync(cts.Token);
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => run.Bounded());
    }
}
