using System.Diagnostics;
using System.Globalization;
using XCall.Cluster;
using XCall.Parallel;

namespace XCall.Bench;

/// <summary>
/// <c>--suite parallel</c>: one-way calls per second from one caller thread to one parallel object in another
/// process (shm), aggregated (the defaults) in alternated bursts with plain XCall [OneWay] calls to a service of the
/// same process (each call its own frame); then, in a second world, the parallel object without aggregation
/// (<see cref="AggregationOptions.None"/>, a non-default setting); then the peer, Akka.NET remoting between two
/// processes (ParallelSuite.Akka.cs). Each burst ends with a synchronous call, so a figure counts calls the object
/// ran, not calls queued.
/// </summary>
internal static partial class ParallelSuite
{
    /// <summary>The process id of the last rank 1 started.</summary>
    private static int s_child;

    public const string Usage = """
        usage: dotnet run -c Release --project bench -- --suite parallel [--calls N] [--rounds R]
          --calls N    one-way calls per burst (default 2000000)
          --rounds R   alternated bursts of each kind (default 7); the median is reported
          --no-apps    leaves out the application rows (the sieve and the ray tracer on 1, 2 and 4 ranks)
          --app-rounds K  runs of each sieve cell, alternated within its row (default 5); the median is reported
        """;

    public static int Run(string[] args)
    {
        if (args.Length > 0 && args[0] == "--child")
        {
            return ChildAsync().GetAwaiter().GetResult();
        }
        int calls = 2_000_000;
        int rounds = 7;
        bool apps = true;
        int appRounds = 5;
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--calls":
                    calls = int.Parse(args[++i], CultureInfo.InvariantCulture);
                    break;
                case "--app-rounds":
                    appRounds = Math.Max(1, int.Parse(args[++i], CultureInfo.InvariantCulture));
                    break;
                case "--no-apps":
                    apps = false;
                    break;
                case "--rounds":
                    rounds = int.Parse(args[++i], CultureInfo.InvariantCulture);
                    break;
                default:
                    Console.Error.WriteLine($"unknown option {args[i]}\n{Usage}");
                    return 2;
            }
        }
        return RunAsync(calls, rounds, apps, appRounds).GetAwaiter().GetResult();
    }

    private static async Task<int> RunAsync(int calls, int rounds, bool apps, int appRounds)
    {
        Console.WriteLine($"# parallel suite on {Machine.Describe()}; {calls:N0} calls per burst, {rounds} rounds, median");
        var aggregated = new List<double>();
        var plain = new List<double>();
        var callerNs = new List<double>();
        var hostNs = new List<double>();
        await using (ParallelWorld world = await JoinWithChildAsync(ParallelWorldOptions.Default))
        {
            IParallelSink sink = await world.CreateAsync<IParallelSink>();
            IParallelSink service = await world.Cluster.OpenAsync<IParallelSink>(1);
            WarmUp(sink, service, calls / 10);
            for (int round = 0; round < rounds; round++)
            {
                long callerBefore = ThreadCpuNanoseconds();
                Dictionary<int, long> hostBefore = ProcessCpuNanoseconds(s_child);
                aggregated.Add(Burst(sink, calls));
                long callerAfter = ThreadCpuNanoseconds();
                callerNs.Add(callerBefore < 0 || callerAfter < 0 ? -1 : (callerAfter - callerBefore) / (double)calls);
                hostNs.Add(CpuSince(hostBefore, ProcessCpuNanoseconds(s_child)) / (double)calls);
                plain.Add(Burst(service, calls / 4));
            }
        }
        var single = new List<double>();
        await using (ParallelWorld world = await JoinWithChildAsync(ParallelWorldOptions.Default with { Aggregation = AggregationOptions.None }))
        {
            IParallelSink sink = await world.CreateAsync<IParallelSink>();
            Burst(sink, calls / 100);
            for (int round = 0; round < Math.Min(rounds, 3); round++)
            {
                single.Add(Burst(sink, calls / 50));
            }
        }
        (List<double>? akka, string? akkaSkipped) = RunAkkaPeer(Math.Max(calls / 20, 1000), Math.Min(rounds, 3));
        double a = Median(aggregated);
        double p = Median(plain);
        double s = Median(single);
        Console.WriteLine();
        Console.WriteLine("| one-way calls, one caller thread, shm, 2 processes | calls/s (median) | x plain [OneWay] |");
        Console.WriteLine("|---|---:|---:|");
        Console.WriteLine($"| parallel object, aggregated (defaults: 4,096 calls / 64 KiB / 1 ms) | {a:N0} | {a / p:F1}x |");
        Console.WriteLine($"| XCall [OneWay] to a service, one frame per call (paired with the row above) | {p:N0} | 1.0x |");
        Console.WriteLine($"| parallel object, no aggregation (AggregationOptions.None, non-default; own world) | {s:N0} | {s / p:F2}x |");
        if (akka is not null)
        {
            double k = Median(akka);
            Console.WriteLine($"| peer: Akka.NET 1.5 remoting, Tell of an int to a remote actor, 2 processes (loopback tcp, Akka's defaults) | {k:N0} | {k / p:F3}x |");
            Console.WriteLine();
            Console.WriteLine($"budget: aggregated >= 10x Akka.NET: {(a >= 10 * k ? "met" : "NOT met")} ({a / k:F0}x)");
            Console.WriteLine($"all bursts, Akka.NET: {string.Join(", ", akka.Select(x => x.ToString("N0", CultureInfo.InvariantCulture)))}");
        }
        else
        {
            Console.WriteLine();
            Console.WriteLine($"peer skipped: {akkaSkipped}");
        }
        Console.WriteLine($"budget: aggregated >= 20,000,000 calls/s: {(a >= 20_000_000 ? "met" : "NOT met")} ({a:N0})");
        Console.WriteLine($"all bursts, aggregated: {string.Join(", ", aggregated.Select(x => x.ToString("N0", CultureInfo.InvariantCulture)))}");
        Console.WriteLine($"all bursts, plain: {string.Join(", ", plain.Select(x => x.ToString("N0", CultureInfo.InvariantCulture)))}");
        if (callerNs.All(x => x >= 0) && hostNs.All(x => x >= 0)) // else not Linux
        {
            // CPU time, not wall time: what each side spends per aggregated call, whatever else ran on the cores.
            Console.WriteLine($"CPU per aggregated call (median of the bursts): caller thread {Stats.Median(callerNs):F1} ns, "
                + $"rank 1's process {Stats.Median(hostNs):F1} ns (all its threads, the ring reader's polling included)");
        }
        if (apps)
        {
            RunApps(appRounds);
        }
        return 0;
    }

    /// <summary>Alternated warm-up bursts of both kinds for at least 3 s: the tiered JIT takes the hot methods of both
    /// processes through tier 0 and an instrumented tier before the optimized one, each step about 100 ms after the
    /// last new call at the tier below, so a warm-up counted in calls alone leaves the first timed bursts on slower
    /// code.</summary>
    private static void WarmUp(IParallelSink sink, IParallelSink service, int calls)
    {
        long start = Stopwatch.GetTimestamp();
        do
        {
            Burst(sink, calls);
            Burst(service, calls);
        }
        while (Stopwatch.GetElapsedTime(start) < TimeSpan.FromSeconds(3));
    }

    /// <summary>Calls per second of <paramref name="calls"/> one-way calls and the synchronous call that sees them all.</summary>
    private static double Burst(IParallelSink sink, int calls)
    {
        long before = sink.Sum();
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < calls; i++)
        {
            sink.Add(1);
        }
        // A parallel object's sync call sees every earlier one-way call; a plain service runs one-way calls on the
        // pool, concurrently with the sync call, so it is asked again until the last of them ran.
        long after = SumWhenAdmitted(sink);
        while (after - before < calls)
        {
            after = SumWhenAdmitted(sink);
        }
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        if (after - before != calls)
        {
            throw new InvalidOperationException($"the sink counted {after - before} of {calls} calls");
        }
        return calls / seconds;
    }

    /// <summary>The sum; a plain service still running a full queue of one-way calls refuses the call, which is asked again.</summary>
    private static long SumWhenAdmitted(IParallelSink sink)
    {
        while (true)
        {
            try
            {
                return sink.Sum();
            }
            catch (XCallServerBusyException)
            {
                Thread.Yield();
            }
        }
    }

    /// <summary>The calling thread's CPU time in ns (Linux schedstat), or -1 where there is none.</summary>
    private static long ThreadCpuNanoseconds() => Schedstat("/proc/thread-self/schedstat");

    /// <summary>
    /// The CPU time in ns of each thread of process <paramref name="pid"/> (Linux schedstat), by thread id; empty
    /// where there is none.
    /// </summary>
    private static Dictionary<int, long> ProcessCpuNanoseconds(int pid)
    {
        var threads = new Dictionary<int, long>();
        string tasks = $"/proc/{pid}/task";
        if (pid == 0 || !Directory.Exists(tasks))
        {
            return threads;
        }
        foreach (string task in Directory.EnumerateDirectories(tasks))
        {
            long ns = Schedstat(Path.Combine(task, "schedstat"));
            if (ns >= 0 && int.TryParse(Path.GetFileName(task), CultureInfo.InvariantCulture, out int tid))
            {
                threads[tid] = ns;
            }
        }
        return threads;
    }

    /// <summary>The CPU time the threads of <paramref name="after"/> ran since <paramref name="before"/> (a thread that ended meanwhile is not counted); -1 when none was read.</summary>
    private static long CpuSince(Dictionary<int, long> before, Dictionary<int, long> after) =>
        after.Count == 0 ? -1 : after.Sum(t => t.Value - before.GetValueOrDefault(t.Key));

    private static long Schedstat(string path)
    {
        try
        {
            // schedstat: time on a CPU (ns), time waiting for one, time slices.
            string text = File.ReadAllText(path);
            return long.Parse(text.AsSpan(0, text.IndexOf(' ')), CultureInfo.InvariantCulture);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or ArgumentOutOfRangeException)
        {
            return -1; // not Linux, or the thread ended while it was read
        }
    }

    private static double Median(List<double> values) => values.Count == 0 ? 0 : Stats.Median(values);

    private static ParallelTypes Types() => new ParallelTypes().Add<IParallelSink>(() => new ParallelSink(), Agglomeration.Never);

    /// <summary>Starts rank 1 (this program with <c>--child</c>) and joins a world of two as rank 0.</summary>
    private static async Task<ParallelWorld> JoinWithChildAsync(ParallelWorldOptions options)
    {
        string job = $"pb{Environment.ProcessId}-{Guid.NewGuid():N}"[..20];
        var start = new ProcessStartInfo("dotnet") { UseShellExecute = false };
        start.ArgumentList.Add(typeof(ParallelSuite).Assembly.Location);
        start.ArgumentList.Add("--suite");
        start.ArgumentList.Add("parallel");
        start.ArgumentList.Add("--child");
        start.Environment[WorldEnvironment.RankVariable] = "1";
        start.Environment[WorldEnvironment.SizeVariable] = "2";
        start.Environment[WorldEnvironment.JobIdVariable] = job;
        using (Process child = Process.Start(start)!)
        {
            s_child = child.Id;
        }
        var variables = new Dictionary<string, string>
        {
            [WorldEnvironment.RankVariable] = "0", [WorldEnvironment.SizeVariable] = "2", [WorldEnvironment.JobIdVariable] = job,
        };
        WorldEnvironment environment = WorldEnvironment.Detect(variables, System.Net.Dns.GetHostName(), Environment.ProcessId);
        return await ParallelWorld.JoinAsync(Types(), options, new ClusterOptions { Environment = environment });
    }

    private static async Task<int> ChildAsync()
    {
        var services = new XCallServer().Add<IParallelSink>(new ParallelSink());
        await using ParallelWorld world = await ParallelWorld.JoinAsync(Types(), cluster: new ClusterOptions { Services = services });
        return 0;
    }
}
