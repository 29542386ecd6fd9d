using System.Diagnostics;
using System.Globalization;

namespace XCall.Bench.Peers;

/// <summary>
/// <c>--peer-pair [ROUNDS [CALLS]]</c> (default 15 rounds of 400 calls, after 8 s of warm-up bursts): the <c>int</c> call of gRPC and of StreamJsonRpc
/// over a Unix domain socket and over an XCall shared-memory stream, all four with the clients and servers of the
/// peer rows (<see cref="PeerBenchmarks"/>: servers in processes of their own, every default), in alternating bursts
/// of CALLS awaited calls: per round one burst each, the order reversed every other round. Prints the per-call
/// mean and median of every burst, the per-round ratios uds / xcall-shm, their medians, and the budget lines of
/// issue 25: over XCall shm at least 1.5x faster than over a Unix socket, for gRPC and for StreamJsonRpc. Beside the
/// times, the voluntary context switches per call of the client and the server process together (threads that went
/// to sleep and had to be woken: each is a wake-up on the call's path or beside it) and the CPU time both processes
/// spent per call, read from /proc.
/// </summary>
internal static class PeerPair
{
    private const double BudgetSpeedup = 1.5;
    private static readonly TimeSpan s_warmUp = TimeSpan.FromSeconds(8);

    private static readonly (string Stack, string Uds, string Shm)[] s_pairs =
    [
        ("gRPC", "grpc-uds", "grpc-xcall-shm"),
        ("StreamJsonRpc", "jsonrpc-uds", "jsonrpc-xcall-shm"),
    ];

    public static int Run(string[] args)
    {
        int rounds = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 15;
        int calls = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 400;
        string[] rows = [.. s_pairs.SelectMany(p => new[] { p.Uds, p.Shm })];
        var peers = new List<PeerBenchmarks>();
        try
        {
            foreach (string row in rows)
            {
                var peer = new PeerBenchmarks { Peer = row };
                peers.Add(peer);
                PeerBenchmarks.WarmUp = TimeSpan.Zero; // warmed below, all four in turn
                peer.Setup();
            }
            // Warm-up by time: the tiered JIT of gRPC's, Kestrel's and StreamJsonRpc's code in three processes keeps
            // these 2 cores busy for several seconds after the first calls.
            long warmStart = Stopwatch.GetTimestamp();
            while (Stopwatch.GetElapsedTime(warmStart) < s_warmUp)
            {
                foreach (PeerBenchmarks peer in peers)
                {
                    Burst(peer, calls);
                }
            }
            var means = rows.Select(_ => new List<double>()).ToArray();
            var medians = rows.Select(_ => new List<double>()).ToArray();
            var ratios = s_pairs.Select(_ => new List<double>()).ToArray();
            var switches = rows.Select(_ => new List<double>()).ToArray();
            var cpu = rows.Select(_ => new List<double>()).ToArray();
            for (int round = 1; round <= rounds; round++)
            {
                var line = new System.Text.StringBuilder(string.Create(CultureInfo.InvariantCulture, $"round {round,2}:"));
                for (int k = 0; k < rows.Length; k++)
                {
                    int t = round % 2 == 1 ? k : rows.Length - 1 - k;
                    (long switchesBefore, long cpuBefore) = Counters(peers[t].ServerProcessId);
                    (double mean, double median) = Burst(peers[t], calls);
                    (long switchesAfter, long cpuAfter) = Counters(peers[t].ServerProcessId);
                    switches[t].Add((double)(switchesAfter - switchesBefore) / calls);
                    cpu[t].Add((cpuAfter - cpuBefore) / 1000.0 / calls);
                    means[t].Add(mean);
                    medians[t].Add(median);
                }
                for (int k = 0; k < rows.Length; k++)
                {
                    line.Append(CultureInfo.InvariantCulture, $"  {rows[k]} {means[k][^1],6:0.0}/{medians[k][^1],6:0.0}");
                }
                for (int p = 0; p < s_pairs.Length; p++)
                {
                    double ratio = means[2 * p][^1] / means[2 * p + 1][^1];
                    ratios[p].Add(ratio);
                    line.Append(CultureInfo.InvariantCulture, $"  {s_pairs[p].Stack} {ratio:0.00}x");
                }
                Console.WriteLine(line.Append("   (µs per call, mean/median of the burst; uds/xcall-shm)"));
            }
            for (int k = 0; k < rows.Length; k++)
            {
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"median over {rounds} rounds of {calls} calls: {rows[k],-17} int, defaults: mean {Stats.Median(means[k]):0.0} µs, median call {Stats.Median(medians[k]):0.0} µs, {Stats.Median(switches[k]):0.0} context switches and {Stats.Median(cpu[k]):0.0} µs of CPU per call (both processes)"));
            }
            for (int p = 0; p < s_pairs.Length; p++)
            {
                double ratio = Stats.Median(ratios[p]);
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"budget: {s_pairs[p].Stack} int over XCall shm at least {BudgetSpeedup:0.0}x faster than over a Unix socket: {(ratio >= BudgetSpeedup ? "met" : "NOT met")} (median of the per-round ratios {ratio:0.00}x; rounds {string.Join(' ', ratios[p].Select(r => r.ToString("0.00", CultureInfo.InvariantCulture)))})"));
            }
            return 0;
        }
        finally
        {
            foreach (PeerBenchmarks peer in peers)
            {
                peer.Cleanup();
            }
        }
    }

    /// <summary>
    /// <c>--peer-loop ROW SECONDS</c>: one peer row (e.g. <c>grpc-xcall-shm</c>) set up as in <see cref="Run"/>, warmed
    /// for 8 s, then called in bursts for SECONDS, for profilers (perf, off-CPU tracing) to attach to: prints both
    /// process ids before the timed loop and the mean call, context switches and CPU per call after it.
    /// </summary>
    public static int Loop(string[] args)
    {
        if (args.Length != 2)
        {
            Console.Error.WriteLine($"usage: --peer-loop ROW SECONDS (rows: {string.Join(", ", PeerBenchmarks.AllPeers)})");
            return 2;
        }
        var peer = new PeerBenchmarks { Peer = args[0] };
        TimeSpan span = TimeSpan.FromSeconds(double.Parse(args[1], CultureInfo.InvariantCulture));
        try
        {
            PeerBenchmarks.WarmUp = s_warmUp;
            peer.Setup();
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"LOOP client {Environment.ProcessId} server {peer.ServerProcessId}"));
            Console.Out.Flush();
            (long switchesBefore, long cpuBefore) = Counters(peer.ServerProcessId);
            long start = Stopwatch.GetTimestamp();
            long calls = 0;
            while (Stopwatch.GetElapsedTime(start) < span)
            {
                Burst(peer, 400);
                calls += 400;
            }
            double wall = Stopwatch.GetElapsedTime(start).TotalMicroseconds;
            (long switchesAfter, long cpuAfter) = Counters(peer.ServerProcessId);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{args[0]}: {calls} calls, mean {wall / calls:0.0} µs, {(double)(switchesAfter - switchesBefore) / calls:0.00} context switches and {(cpuAfter - cpuBefore) / 1000.0 / calls:0.0} µs of CPU per call (both processes)"));
            return 0;
        }
        finally
        {
            peer.Cleanup();
        }
    }

    /// <summary>Makes <paramref name="calls"/> awaited int calls; returns the mean and the median time of one, in µs.</summary>
    private static (double Mean, double Median) Burst(PeerBenchmarks peer, int calls)
    {
        var each = new double[calls];
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < calls; i++)
        {
            long t0 = Stopwatch.GetTimestamp();
            peer.Int().GetAwaiter().GetResult();
            each[i] = Stopwatch.GetElapsedTime(t0).TotalMicroseconds;
        }
        double mean = Stopwatch.GetElapsedTime(start).TotalMicroseconds / calls;
        Array.Sort(each);
        return (mean, each[calls / 2]);
    }

    /// <summary>
    /// Voluntary context switches and CPU time (ns, from schedstat) so far of every live thread of this process and
    /// of process <paramref name="server"/>.
    /// </summary>
    private static (long Switches, long CpuNs) Counters(int server)
    {
        long switches = 0;
        long cpuNs = 0;
        foreach (string process in new[] { "self", server.ToString(CultureInfo.InvariantCulture) })
        {
            foreach (string task in Directory.EnumerateDirectories($"/proc/{process}/task"))
            {
                try
                {
                    foreach (string line in File.ReadLines(Path.Combine(task, "status")))
                    {
                        if (line.StartsWith("voluntary_ctxt_switches:", StringComparison.Ordinal))
                        {
                            switches += long.Parse(line.AsSpan("voluntary_ctxt_switches:".Length).Trim(), CultureInfo.InvariantCulture);
                        }
                    }
                    string schedstat = File.ReadAllText(Path.Combine(task, "schedstat"));
                    cpuNs += long.Parse(schedstat.AsSpan(0, schedstat.IndexOf(' ')), CultureInfo.InvariantCulture);
                }
                catch (IOException)
                {
                    // The thread ended meanwhile.
                }
            }
        }
        return (switches, cpuNs);
    }
}
