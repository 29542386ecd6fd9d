using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using XCall.Channels;
using Barrier = XCall.Channels.Barrier;
using Parallel = XCall.Channels.Parallel;

namespace XCall.Bench;

/// <summary>
/// Monte Carlo Pi, CSP.NET's tables 2 and 3 (listings 7 and 8): the sequential loop against the same
/// work split over processes that start together at a Barrier. Table 2: a fixed number of
/// iterations over 1 ... 600 processes; table 3: 400 processes at 10^3, 10^4, ... iterations. Runs in
/// a child process on both cores, and again pinned to one core with taskset, where the processes can
/// only add overhead: the budget is 600 processes within 5 % of the sequential loop there.
/// </summary>
/// <remarks>
/// Both forms draw from a seeded <see cref="Random"/> (the listing's workers are seeded; .NET's
/// seeded generator is slower than its unseeded one, so the sequential loop is seeded too).
/// </remarks>
internal static partial class ChannelSuite
{
    private static readonly int[] s_piProcesses = [1, 50, 100, 200, 300, 400, 600];
    private const int PiBudgetProcesses = 600;
    private const int PiTable3Processes = 400;

    /// <summary>Alternating runs of the sequential loop and 600 processes; the median ratio counts.</summary>
    private const int PiPairRounds = 3;

    private static void RunPi(SuiteOptions options, SuiteLog log, List<CallResult> results)
    {
        string[] child = [Self, "--suite", "channels", "--child", "pi", Text(options.PiIterations), Text(options.PiLargest)];
        ReportPi(options, log, results, "both cores", "", CaptureAll("dotnet", child), budget: false);
        string[]? pinned = CaptureAll("taskset", ["-c", "0", "dotnet", .. child]);
        if (pinned is null)
        {
            log.Line("// Monte Carlo Pi on one core: skipped (`taskset` is not on PATH, or the pinned run failed)");
            return;
        }
        ReportPi(options, log, results, "one core (taskset -c 0)", "-1core", pinned, budget: true);
    }

    private static void ReportPi(SuiteOptions options, SuiteLog log, List<CallResult> results, string config, string suffix, string[]? lines, bool budget)
    {
        if (lines is null)
        {
            log.Line($"// Monte Carlo Pi on {config}: the child process failed");
            return;
        }
        string[][] rows = [.. lines.Select(l => l.Split(' '))];
        string[][] Rows(string kind) => [.. rows.Where(r => r.Length > 2 && r[1] == kind)];
        string cores = Rows("cores").FirstOrDefault()?[2] ?? "?";
        string[][] pairs = Rows("pair");
        double seq = Median(pairs.Select(p => Number(p[2])));
        double par = Median(pairs.Select(p => Number(p[3])));
        double ratio = Median(pairs.Select(p => Number(p[3]) / Number(p[2])));
        long iterations = options.PiIterations;

        void Add(long n, int processes, double ms, double? sequential)
        {
            results.Add(processes == 0
                ? new CallResult($"pi-{n}", "seq" + suffix, ms * 1e6 / n, null) { RatioToLocal = 1 }
                : new CallResult($"pi-{n}-p{processes}", "xcall" + suffix, ms * 1e6 / n, null) { RatioToLocal = ms / sequential });
        }

        log.Line();
        log.Line($"Monte Carlo Pi, table 2: {iterations:N0} iterations over 1 ... {PiBudgetProcesses} processes, {config} ({cores} processor(s) seen by .NET); sequential and {PiBudgetProcesses}: median of {pairs.Length} alternating runs");
        log.Line("| processes | ms | x sequential |");
        log.Line("|---:|---:|---:|");
        log.Line($"| sequential | {seq:0.0} | 1.00 |");
        Add(iterations, 0, seq, null);
        foreach (string[] row in Rows("t2"))
        {
            int processes = Parse(row[2]);
            double ms = Number(row[3]);
            log.Line($"| {processes} | {ms:0.0} | {Format(ms / seq, "0.000")} |");
            Add(iterations, processes, ms, seq);
        }
        log.Line($"| {PiBudgetProcesses} | {par:0.0} | {Format(ratio, "0.000")} (median of the runs' ratios) |");
        Add(iterations, PiBudgetProcesses, par, seq);
        if (budget)
        {
            log.Budget($"Monte Carlo Pi on one core, {PiBudgetProcesses} processes / sequential ({iterations:N0} iterations)", ratio, 1.05, $"{par:0.0} vs {seq:0.0} ms, ratios {string.Join(", ", pairs.Select(p => Format(Number(p[3]) / Number(p[2]), "0.000")))}");
        }

        log.Line();
        log.Line($"Monte Carlo Pi, table 3: {PiTable3Processes} processes against the sequential loop, {config}");
        log.Line($"| iterations | {PiTable3Processes} processes ms | sequential ms | x sequential |");
        log.Line("|---:|---:|---:|---:|");
        foreach (string[] row in Rows("t3"))
        {
            long n = long.Parse(row[2], CultureInfo.InvariantCulture);
            double parallel = Number(row[3]);
            double sequential = Number(row[4]);
            log.Line($"| {n:N0} | {parallel:0.000} | {sequential:0.000} | {Format(parallel / sequential, "0.00")} |");
            Add(n, 0, sequential, null);
            Add(n, PiTable3Processes, parallel, sequential);
        }
    }

    private static int PiChild(long iterations, long largest)
    {
        // Warm-up: the processes, the barrier and the pool run their tier-1 code before anything is timed.
        PiSequential(iterations / 50);
        PiParallel(PiBudgetProcesses, iterations / 50);
        PiParallel(PiTable3Processes, 1000);
        Console.WriteLine($"RESULT cores {Environment.ProcessorCount}");
        for (int round = 0; round < PiPairRounds; round++)
        {
            double seq = PiSequential(iterations);
            double par = PiParallel(PiBudgetProcesses, iterations);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RESULT pair {seq:0.###} {par:0.###}"));
        }
        foreach (int processes in s_piProcesses.Where(p => p != PiBudgetProcesses))
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RESULT t2 {processes} {PiParallel(processes, iterations):0.###}"));
        }
        for (long n = 1000; n <= largest; n *= 10)
        {
            double parallel = PiParallel(PiTable3Processes, n);
            double sequential = PiSequential(n);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RESULT t3 {n} {parallel:0.###} {sequential:0.###}"));
        }
        return 0;
    }

    /// <summary>Listing 7: ms for <paramref name="iterations"/> darts in one loop.</summary>
    private static double PiSequential(long iterations)
    {
        long start = Stopwatch.GetTimestamp();
        _ = CountHits(iterations, new Random(115));
        return Stopwatch.GetElapsedTime(start).TotalMilliseconds;
    }

    /// <summary>How long a child process runs the Pi kernel before its clock starts: long enough for the tier-up.</summary>
    private const int PiWarmUpMs = 300;

    /// <summary>
    /// Runs <see cref="CountHits"/> for <see cref="PiWarmUpMs"/> ms so that a fresh process reaches the code the
    /// sequential loop runs: <see cref="Random"/>'s methods start as ReadyToRun code, about 40 % slower, and are
    /// recompiled only after they have been called for a while (tiered compilation).
    /// </summary>
    private static void WarmUpPi()
    {
        var random = new Random(1);
        long start = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(start).TotalMilliseconds < PiWarmUpMs)
        {
            _ = CountHits(100_000, random);
        }
    }

    /// <summary>Listing 8: ms to create <paramref name="processes"/> workers, run them and collect their counts.</summary>
    private static double PiParallel(int processes, long iterations)
    {
        long start = Stopwatch.GetTimestamp();
        var barrier = new Barrier(processes);
        var workers = new PiWorker[processes];
        for (int i = 0; i < processes; i++)
        {
            workers[i] = new PiWorker(iterations / processes, 115 + (i * 10), barrier);
        }
        new Channels.Parallel(workers).Run(); // qualified: XCall.Parallel is a namespace too
        _ = workers.Sum(w => w.Hits);
        return Stopwatch.GetElapsedTime(start).TotalMilliseconds;
    }

    /// <summary>
    /// Random points in the square [-1, 1]², counting those inside the unit circle. Fully optimised from
    /// the first call: the sequential loop calls it once and the workers hundreds of times, and both
    /// should run the same machine code rather than whatever tier each reached.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static long CountHits(long iterations, Random random)
    {
        long hits = 0;
        for (long i = 0; i < iterations; i++)
        {
            double x = (random.NextDouble() * 2.0) - 1.0;
            double y = (random.NextDouble() * 2.0) - 1.0;
            if ((x * x) + (y * y) < 1)
            {
                hits++;
            }
        }
        return hits;
    }

    /// <summary>Listing 8's worker: waits at the barrier for all, then counts its share.</summary>
    private sealed class PiWorker(long iterations, int seed, Barrier start) : IProcess
    {
        private readonly Random _random = new(seed);

        public long Hits { get; private set; }

        public async Task RunAsync(CancellationToken cancellationToken)
        {
            await start.SyncAsync();
            Hits = CountHits(iterations, _random);
        }
    }
}
