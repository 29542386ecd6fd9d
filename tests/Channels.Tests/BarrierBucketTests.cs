using Barrier = XCall.Channels.Barrier;

namespace XCall.Channels.Tests;

public class BarrierBucketTests
{
    [Fact]
    public async Task Barrier_holds_every_process_until_all_have_synced_each_round()
    {
        const int processes = 8;
        const int rounds = 20;
        var barrier = new Barrier(processes);
        int arrivals = 0;
        var run = new Parallel();
        for (int p = 0; p < processes; p++)
        {
            run.Add(async _ =>
            {
                for (int r = 0; r < rounds; r++)
                {
                    Interlocked.Increment(ref arrivals);
                    await barrier.SyncAsync();
                    // Everyone arrived for round r; nobody can be two rounds ahead.
                    int seen = Volatile.Read(ref arrivals);
                    Assert.InRange(seen, (r + 1) * processes, (r + 2) * processes);
                    // The next round needs this process too.
                }
            });
        }
        await run.RunAsync().Bounded();
        Assert.Equal(processes * rounds, arrivals);
    }

    [Fact]
    public async Task Resign_lets_the_others_through_and_Enroll_makes_them_wait()
    {
        var barrier = new Barrier(3);
        Task a = barrier.SyncAsync();
        Task b = barrier.SyncAsync();
        Assert.False(a.IsCompleted);
        barrier.Resign();
        await Task.WhenAll(a, b).Bounded();
        barrier.Enroll();
        Task c = barrier.SyncAsync();
        Task d = barrier.SyncAsync();
        Assert.False(c.IsCompleted);
        barrier.Sync();
        await Task.WhenAll(c, d).Bounded();
        Assert.Equal(3, barrier.Enrolled);
    }

    [Fact]
    public async Task Bucket_holds_processes_until_flushed()
    {
        var bucket = new Bucket();
        Task[] falling = [.. Enumerable.Range(0, 5).Select(_ => Task.Run(bucket.FallIntoAsync))];
        await Within.UntilAsync(() => bucket.Holding == 5);
        Assert.DoesNotContain(falling, t => t.IsCompleted);
        Assert.Equal(5, bucket.Flush());
        await Task.WhenAll(falling).Bounded();
        Assert.Equal(0, bucket.Flush());
        Task late = bucket.FallIntoAsync();
        Assert.False(late.IsCompleted);
        Assert.Equal(1, bucket.Flush());
        await late.Bounded();
    }
}
