using System.Diagnostics;
using System.Globalization;

// CSP.NET's distributed Monte Carlo Pi (listings 9-10): every rank throws its share of the darts and sends its
// hits to rank 0 on the named Any2One "hits"; a named barrier starts them together. `xcall run -n 3 -- dotnet
// XCall.Samples.DistributedPi.dll 1e9` splits 1e9 darts over three OS processes; `dotnet
// XCall.Samples.DistributedPi.dll 1e9 3` runs the same three processes in one (stand-alone), and with 1 the
// sequential loop.

long darts = args.Length > 0 ? (long)double.Parse(args[0], CultureInfo.InvariantCulture) : 100_000_000;
await using CspWorld csp = await CspWorld.JoinAsync();
int size = csp.IsStandAlone ? (args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 1) : csp.Size;
IEnumerable<int> ranks = csp.IsStandAlone ? Enumerable.Range(0, size) : [csp.Rank];
await new Parallel(ranks.Select(rank => (Func<CancellationToken, Task>)(ct => ThrowAsync(rank, ct)))).RunAsync();
return 0;

async Task ThrowAsync(int rank, CancellationToken ct)
{
    Any2One<long>? collected = rank == 0 ? await csp.CreateAny2OneAsync<long>("hits", cancellationToken: ct) : null;
    NamedBarrier start = await csp.BarrierAsync("start", size, ct);
    IChannelOut<long> hits = await csp.OpenOutAsync<long>("hits", cancellationToken: ct);
    await start.SyncAsync();
    var clock = Stopwatch.StartNew();
    long share = (darts / size) + (rank < darts % size ? 1 : 0);
    Task send = hits.WriteAsync(Darts.CountHits(share, new Random(115 + (rank * 10))), ct).AsTask();
    if (collected is null)
    {
        await send;
        return;
    }
    long total = 0;
    for (int i = 0; i < size; i++)
    {
        total += await collected.In.ReadAsync(ct);
    }
    await send;
    Console.WriteLine($"pi ~ {4.0 * total / darts:F6} from {darts:N0} darts on {size} process(es){(csp.IsStandAlone ? " in one OS process" : "")}: {clock.ElapsedMilliseconds} ms");
}

/// <summary>Listing 7's loop: random points in the square [-1, 1]², counting those inside the unit circle.</summary>
internal static class Darts
{
    internal static long CountHits(long iterations, Random r)
    {
        long hits = 0;
        for (long i = 0; i < iterations; i++)
        {
            double x = (r.NextDouble() * 2.0) - 1.0;
            double y = (r.NextDouble() * 2.0) - 1.0;
            if ((x * x) + (y * y) < 1)
            {
                hits++;
            }
        }
        return hits;
    }
}
