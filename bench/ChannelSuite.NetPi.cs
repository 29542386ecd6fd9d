using System.Diagnostics;
using System.Globalization;
using XCall.Channels;
using XCall.Channels.Distributed;
using XCall.Cluster;

namespace XCall.Bench;

/// <summary>
/// Distributed Monte Carlo Pi (CSP.NET's table 4, listings 9-10): the darts split over 1, 2 and 3 OS processes
/// that start together at a named barrier and send their hits to rank 0 on a named Any2One, against the
/// sequential loop in this process, measured just before each. The distributed time runs from the barrier to
/// the last count at rank 0: process start and the world's join are left out, as the paper's timing did.
/// </summary>
internal static partial class ChannelSuite
{
    private static readonly int[] s_netPiProcesses = [1, 2, 3];

    private static void RunNetPi(SuiteOptions options, SuiteLog log, List<CallResult> results) =>
        RunPiOverProcesses("named barrier + Any2One, ranks in separate OS processes over shm", "distributed ms", "net-pi", options, log, results, budget: true);

    /// <summary>
    /// Pi over 1, 2 and 3 ranks of the child <paramref name="child"/> against the sequential loop measured just
    /// before each, as a table and rows named <paramref name="child"/>-N; with <paramref name="budget"/>, the issue's budget on 2.
    /// </summary>
    private static void RunPiOverProcesses(string how, string column, string child, SuiteOptions options, SuiteLog log, List<CallResult> results, bool budget)
    {
        long darts = options.NetPiDarts;
        log.Line();
        log.Line($"{(budget ? "Distributed Monte Carlo Pi" : "Monte Carlo Pi by DistParallel")}, {darts:N0} darts: {how}, against the sequential loop measured just before");
        log.Line($"| processes | sequential ms | {column} | x sequential |");
        log.Line("|---:|---:|---:|---:|");
        foreach (int processes in s_netPiProcesses)
        {
            double sequential = PiSequential(darts);
            double? distributed = RunRanks(processes, child, Text(darts));
            if (distributed is not { } ms)
            {
                log.Line($"| {processes} | {sequential:0} | failed | |");
                continue;
            }
            log.Line($"| {processes} | {sequential:0} | {ms:0} | {Format(ms / sequential, "0.00")} |");
            results.Add(new CallResult($"{child}-{processes}", "shm", ms * 1e6, null) { RatioToLocal = ms / sequential });
            if (budget && processes == 2)
            {
                log.Budget($"distributed Monte Carlo Pi on 2 processes / sequential ({darts:N0} darts)", ms / sequential, 0.55, $"{ms:0} vs {sequential:0} ms");
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

    /// <summary>One rank: its share of the darts between the start barrier and rank 0's last count.</summary>
    private static int NetPiChild(long darts)
    {
        return RunAsync().GetAwaiter().GetResult();

        async Task<int> RunAsync()
        {
            await using CspWorld csp = await CspWorld.JoinAsync();
            int size = csp.Size;
            int rank = csp.Rank;
            Any2One<long>? collected = rank == 0 ? await csp.CreateAny2OneAsync<long>("hits") : null;
            NamedBarrier start = await csp.BarrierAsync("start", size);
            IChannelOut<long> hits = await csp.OpenOutAsync<long>("hits");
            _ = CountHits(1000, new Random(1)); // compiled before the clock starts
            await start.SyncAsync();
            long begin = Stopwatch.GetTimestamp();
            long share = (darts / size) + (rank < darts % size ? 1 : 0);
            Task send = hits.WriteAsync(CountHits(share, new Random(115 + (rank * 10)))).AsTask();
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
    }
}
