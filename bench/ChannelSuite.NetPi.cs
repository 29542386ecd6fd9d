using System.Diagnostics;
using System.Globalization;
using XCall.Channels;
using XCall.Channels.Distributed;
using XCall.Cluster;

namespace XCall.Bench;

/// <summary>
/// Distributed Monte Carlo Pi (CSP.NET's table 4, listings 9-10): the darts shared by 1, 2 and 3 OS processes
/// that start together at a named barrier and send their hits to rank 0 on a named Any2One, against the
/// sequential loop in this process, in alternating rounds (the sequential loop, then the processes): the ratio is
/// the median of the rounds' ratios, since how fast a vCPU runs moves with where the hypervisor puts it, between
/// rounds more than within one. The distributed time runs from the barrier to the last count at rank 0: process
/// start and the world's join are left out, as the paper's timing did.
/// The darts go out as a bag of tasks, not listing 9's equal shares: rank 0 writes chunks of
/// <see cref="PiChunksPerRank"/> per rank to a named One2Any that every rank reads until its stop mark, so a rank
/// on a slower vCPU takes fewer chunks instead of holding the others up (vCPUs of one VM need not run at one
/// speed; docs/benchmarks.md, "Distributed Pi as a bag of tasks").
/// </summary>
internal static partial class ChannelSuite
{
    private static readonly int[] s_netPiProcesses = [1, 2, 3];

    /// <summary>Chunks of darts per rank in the bag: at 10^9 darts on 2 ranks a chunk is ~1/128 of the run, the most a rank can finish after the other.</summary>
    private const int PiChunksPerRank = 64;

    private static void RunNetPi(SuiteOptions options, SuiteLog log, List<CallResult> results) =>
        RunPiOverProcesses("named barrier, a bag of chunks on a One2Any, hits on an Any2One, ranks in separate OS processes over shm", "distributed ms", "net-pi", options, log, results, budget: true);

    /// <summary>
    /// Pi over 1, 2 and 3 ranks of the child <paramref name="child"/> against the sequential loop, each paired with
    /// the sequential loop measured just before it in <see cref="SuiteOptions.NetPiRounds"/> rounds, as a table
    /// (medians) and rows named <paramref name="child"/>-N; with <paramref name="budget"/>, the issue's budget on 2.
    /// </summary>
    private static void RunPiOverProcesses(string how, string column, string child, SuiteOptions options, SuiteLog log, List<CallResult> results, bool budget)
    {
        long darts = options.NetPiDarts;
        int rounds = options.NetPiRounds;
        WarmUpPi(); // the sequential loop runs the code the ranks run, from its first round
        log.Line();
        log.Line($"{(budget ? "Distributed Monte Carlo Pi" : "Monte Carlo Pi by DistParallel")}, {darts:N0} darts: {how}, against the sequential loop measured just before, median of {rounds} alternating rounds");
        log.Line($"| processes | sequential ms | {column} | x sequential (median of the rounds' ratios) | rounds |");
        log.Line("|---:|---:|---:|---:|---|");
        foreach (int processes in s_netPiProcesses)
        {
            var sequential = new List<double>();
            var distributed = new List<double>();
            for (int round = 0; round < rounds; round++)
            {
                double alone = PiSequential(darts);
                if (RunRanks(processes, child, Text(darts)) is not { } ms)
                {
                    break;
                }
                sequential.Add(alone);
                distributed.Add(ms);
            }
            if (distributed.Count < rounds)
            {
                log.Line($"| {processes} | {(sequential.Count > 0 ? Format(Median(sequential), "0") : "")} | failed in round {distributed.Count + 1} | | |");
                continue;
            }
            double[] ratios = [.. distributed.Select((ms, i) => ms / sequential[i])];
            double ratio = Median(ratios);
            double sequentialMs = Median(sequential);
            double distributedMs = Median(distributed);
            string each = string.Join(", ", ratios.Select(r => Format(r, "0.00")));
            log.Line($"| {processes} | {sequentialMs:0} | {distributedMs:0} | {Format(ratio, "0.00")} | {each} |");
            results.Add(new CallResult($"{child}-{processes}", "shm", distributedMs * 1e6, null) { RatioToLocal = ratio });
            if (budget && processes == 2)
            {
                log.Budget($"distributed Monte Carlo Pi on 2 processes / sequential ({darts:N0} darts, median of {rounds} rounds' ratios)", ratio, 0.55,
                    $"medians {distributedMs:0} vs {sequentialMs:0} ms; rounds {each}");
            }
        }
    }

    /// <summary>Starts <paramref name="processes"/> ranks of the child <paramref name="child"/>; the ms rank 0 reports, or null when a rank failed.</summary>
    private static double? RunRanks(int processes, params string[] child)
    {
        string job = $"b{child[0]}{Environment.ProcessId}n{processes}";
        var ranks = new List<Process>();
        try
        {
            for (int rank = 0; rank < processes; rank++)
            {
                var start = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true };
                foreach (string a in (string[])[Self, "--suite", "channels", "--child", .. child])
                {
                    start.ArgumentList.Add(a);
                }
                start.Environment[WorldEnvironment.RankVariable] = Text(rank);
                start.Environment[WorldEnvironment.SizeVariable] = Text(processes);
                start.Environment[WorldEnvironment.JobIdVariable] = job;
                ranks.Add(Process.Start(start)!);
            }
            string output = ranks[0].StandardOutput.ReadToEnd();
            foreach (Process rank in ranks)
            {
                rank.WaitForExit();
            }
            string? line = output.Split('\n').FirstOrDefault(l => l.StartsWith("RESULT ", StringComparison.Ordinal));
            return ranks.All(r => r.ExitCode == 0) && line is not null ? Number(line.Split(' ')[1]) : null;
        }
        finally
        {
            foreach (Process rank in ranks)
            {
                rank.Dispose();
            }
        }
    }

    /// <summary>One rank: the chunks it takes from the bag between the start barrier and rank 0's last count.</summary>
    private static int NetPiChild(long darts)
    {
        return RunAsync().GetAwaiter().GetResult();

        async Task<int> RunAsync()
        {
            await using CspWorld csp = await CspWorld.JoinAsync();
            int size = csp.Size;
            int rank = csp.Rank;
            Any2One<long>? collected = rank == 0 ? await csp.CreateAny2OneAsync<long>("hits") : null;
            // The bag holds every chunk and stop mark, so rank 0 fills it at once and never waits on a reader.
            One2Any<long>? bag = rank == 0 ? await csp.CreateOne2AnyAsync("darts", new FifoBuffer<long>((PiChunksPerRank * size) + size + 1)) : null;
            NamedBarrier start = await csp.BarrierAsync("start", size);
            IChannelOut<long> hits = await csp.OpenOutAsync<long>("hits");
            IChannelIn<long> chunks = bag is not null ? bag.In : await csp.OpenInAsync<long>("darts");
            WarmUpPi(); // the kernel at its final tier before the clock starts
            await start.SyncAsync();
            long begin = Stopwatch.GetTimestamp();
            if (bag is not null)
            {
                await Feed(bag.Out, darts, size);
            }
            var random = new Random(115 + (rank * 10));
            long counted = 0;
            for (long chunk = await chunks.ReadAsync(); chunk > 0; chunk = await chunks.ReadAsync())
            {
                counted += CountHits(chunk, random);
            }
            Task send = hits.WriteAsync(counted).AsTask();
            if (collected is not null)
            {
                long total = 0;
                for (int i = 0; i < size; i++)
                {
                    total += await collected.In.ReadAsync();
                }
                double ms = Stopwatch.GetElapsedTime(begin).TotalMilliseconds;
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RESULT {ms:0.0} {total}"));
            }
            await send;
            return 0;
        }

        // Every dart in chunks, then one stop mark (0) per rank: a rank stops at the first mark it reads.
        static async Task Feed(IChannelOut<long> bag, long darts, int size)
        {
            long chunks = PiChunksPerRank * (long)size;
            long chunk = Math.Max(1, (darts + chunks - 1) / chunks); // rounded up: at most `chunks` chunks, which the bag holds
            for (long left = darts; left > 0; left -= chunk)
            {
                await bag.WriteAsync(Math.Min(chunk, left));
            }
            for (int i = 0; i < size; i++)
            {
                await bag.WriteAsync(0);
            }
        }
    }
}
