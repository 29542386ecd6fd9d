using System.Diagnostics;

// CSP.NET's Monte Carlo Pi (listings 7-8): the sequential loop, then the same work split over
// processes that start together at a Barrier, as in the listing's Worker.

const long Max = 40_000_000;
int processes = args.Length > 0 ? int.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture) : 20;

var clock = Stopwatch.StartNew();
long hits = Darts.CountHits(Max, new Random(115));
Console.WriteLine($"Seq_Area: {hits}/{Max} = {4.0 * hits / Max:F6}  ({clock.ElapsedMilliseconds} ms)");

clock.Restart();
var start = new Barrier(processes);
var workers = new Worker[processes];
for (int i = 0; i < processes; i++)
{
    workers[i] = new Worker(Max / processes, 115 + i * 10, start);
}
await new Parallel(workers).RunAsync();
hits = workers.Sum(w => w.Hits);
Console.WriteLine($"Par.Area: {hits}/{Max} = {4.0 * hits / Max:F6}  ({clock.ElapsedMilliseconds} ms, {processes} processes, {Environment.ProcessorCount} cores)");

/// <summary>Listing 7's loop: random points in the square [-1, 1]², counting those inside the unit circle.</summary>
internal static class Darts
{
    internal static long CountHits(long iterations, Random r)
    {
        long hits = 0;
        for (long i = 0; i < iterations; i++)
        {
            double x = r.NextDouble() * 2.0 - 1.0;
            double y = r.NextDouble() * 2.0 - 1.0;
            if (x * x + y * y < 1)
            {
                hits++;
            }
        }
        return hits;
    }
}

/// <summary>Listing 8: counts its share of hits after every worker has reached the barrier.</summary>
internal sealed class Worker(long iterations, int seed, Barrier start) : IProcess
{
    public long Hits { get; private set; }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        await start.SyncAsync();
        Hits = Darts.CountHits(iterations, new Random(seed));
    }
}
