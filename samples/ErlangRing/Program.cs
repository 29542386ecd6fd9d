using System.Diagnostics;
using System.Globalization;

// The Erlang ring (N processes, M laps): each process forwards a token from its input channel to
// the next one's; the last channel leads back to the first process. Usage: ErlangRing [N] [M].

int n = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 10_000;
int m = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 1_000;

var links = new One2One<int>[n];
for (int i = 0; i < n; i++)
{
    links[i] = new One2One<int>();
}
var ring = new Parallel();
for (int i = 1; i < n; i++)
{
    ChannelIn<int> input = links[i - 1].In;
    ChannelOut<int> output = links[i].Out;
    ring.Add(async _ =>
    {
        for (int lap = 0; lap < m; lap++)
        {
            await output.WriteAsync(await input.ReadAsync());
        }
    });
}
var clock = new Stopwatch();
ring.Add(async _ =>
{
    // Process 0 starts each lap and receives it back from process n - 1.
    clock.Start();
    for (int lap = 0; lap < m; lap++)
    {
        await links[0].Out.WriteAsync(lap);
        await links[n - 1].In.ReadAsync();
    }
    clock.Stop();
});
await ring.RunAsync();
double hops = (double)n * m;
Console.WriteLine($"N={n} M={m}: {clock.ElapsedMilliseconds} ms, {clock.Elapsed.TotalNanoseconds / hops:F1} ns per hop, peak working set {Process.GetCurrentProcess().PeakWorkingSet64 >> 20} MiB");
