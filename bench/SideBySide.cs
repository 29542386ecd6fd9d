using System.Diagnostics;

namespace XCall.Bench;

/// <summary>
/// <c>--side-by-side shm|tcp</c>: alternates short bursts of the machine-limit probe and of XCall's
/// <c>int</c> call on that transport, so each pair of figures faces the same load on a shared machine.
/// Prints one line per round and the median ratio; a diagnostic, not part of the default run.
/// </summary>
internal static class SideBySide
{
    public static int Run(string transport, int rounds)
    {
        string mode = transport == "shm" ? "spin" : "tcp";
        long probeRounds = transport == "shm" ? 50_000 : 3_000;
        int calls = transport == "shm" ? 200_000 : 5_000;
        using RemoteServer server = RemoteServer.Start(transport);
        using RemoteService<ICallCost> remote = Remote.Open<ICallCost>(server.Address, RemoteServer.Options);
        ICallCost proxy = remote.Proxy;
        Measure(proxy, calls); // warm up: tiered JIT, both processes
        Measure(proxy, calls);
        var ratios = new List<double>();
        for (int round = 0; round < rounds; round++)
        {
            LimitProbe.Limit limit = LimitProbe.Measure(mode, [4], probeRounds)[0];
            double call = Measure(proxy, calls);
            ratios.Add(call / limit.MedianNs);
            Console.WriteLine($"round {round + 1}: limit-{mode} {limit.MedianNs,8:0.0} ns ({limit.Implementation})   {transport} int {call,8:0.0} ns   ratio {call / limit.MedianNs:0.00}x");
        }
        ratios.Sort();
        Console.WriteLine($"median ratio {transport} int / limit-{mode}: {ratios[ratios.Count / 2]:0.00}x over {rounds} rounds");
        return 0;
    }

    /// <summary>Median of five batches, ns per call (the probe reports its median the same way).</summary>
    private static double Measure(ICallCost proxy, int calls)
    {
        var batches = new double[5];
        int perBatch = calls / batches.Length;
        for (int b = 0; b < batches.Length; b++)
        {
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < perBatch; i++)
            {
                proxy.Test(i);
            }
            batches[b] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / perBatch;
        }
        Array.Sort(batches);
        return batches[batches.Length / 2];
    }
}
