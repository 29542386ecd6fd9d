using System.Diagnostics;
using System.Globalization;

namespace XCall.Bench;

/// <summary>
/// <c>--suite concurrency</c>: many callers against one server with the default settings (an <see cref="XCallServer"/>
/// as constructed, served with <see cref="Remote.Serve"/>'s defaults on a TCP address, which also serves shared
/// memory under its name). Two shapes, each over shm and tcp in the same run, in alternating order round by round:
/// 16 client processes of one thread each (one connection each), and 16 threads of this process sharing one
/// connection. Every call is timed on its own; the rows give the total calls per second and the p50 and p99 of
/// single calls. The clients use the defaults too, except that the tcp clients set
/// <see cref="RemoteOptions.PreferSharedMemory"/> to false (otherwise they would get shared memory).
/// </summary>
internal static partial class ConcurrencySuite
{
    public const string Usage = """
        usage: dotnet run -c Release --project bench -- --suite concurrency [options]
          --callers N     client processes, and threads on one connection (default 16)
          --ms N          length of one measured run, ms (default 1500)
          --rounds N      rounds, each runs every shape over shm and over tcp (default 3)
          --load N        also run every shape while N busy threads run in another process (labelled rows)
          --out DIR       write calls.json, calls.md, calls.csv there (default: a new folder it prints)
        """;

    private static readonly string[] s_transports = ["shm", "tcp"];

    public static int Run(string[] args)
    {
        if (args.Length > 0 && args[0] == "--client")
        {
            return ClientProcess(args[1], args[2]);
        }
        if (args is ["-h"] or ["--help"])
        {
            Console.WriteLine(Usage);
            return 0;
        }
        int callers = 16, ms = 1500, rounds = 3, load = 0;
        string? outDir = null;
        try
        {
            for (int i = 0; i < args.Length; i++)
            {
                string Next() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{args[i]} needs a value.");
                int Positive() => int.TryParse(Next(), CultureInfo.InvariantCulture, out int n) && n > 0 ? n : throw new ArgumentException($"{args[i - 1]} needs a positive number.");
                switch (args[i])
                {
                    case "--callers": callers = Positive(); break;
                    case "--ms": ms = Positive(); break;
                    case "--rounds": rounds = Positive(); break;
                    case "--load": load = Positive(); break;
                    case "--out": outDir = Next(); break;
                    default: throw new ArgumentException($"Unknown option {args[i]}.");
                }
            }
        }
        catch (ArgumentException ex)
        {
            Console.Error.WriteLine($"{ex.Message}\n{Usage}");
            return 2;
        }

        string machine = Machine.Describe();
        Console.WriteLine($"Concurrency suite: {callers} client processes and {callers} threads on one connection, {rounds} rounds of {ms} ms per row; {machine}");
        string name = $"xcall-conc-{Environment.ProcessId}-{Guid.NewGuid().ToString("N")[..6]}";
        using ChildServer server = ChildServer.Start(["--serve-default", $"tcp://127.0.0.1:0/{name}"], "The default-settings server");
        string shmAddress = $"shm://{name}";
        string tcpAddress = server.Address;
        Console.WriteLine($"// server: {tcpAddress} (and {shmAddress}), default settings; starting {callers} client processes...");
        var clients = new List<ChildServer>();
        try
        {
            for (int i = 0; i < callers; i++)
            {
                clients.Add(ChildServer.Start(["--suite", "concurrency", "--client", shmAddress, tcpAddress], "A client process"));
            }
            using var threads = new ThreadCallers(callers, shmAddress, tcpAddress);
            var shapes = new List<Shape>();
            foreach (bool loaded in load > 0 ? new[] { false, true } : [false])
            {
                foreach (string transport in s_transports)
                {
                    shapes.Add(new Shape($"{callers} processes", transport, loaded, clients, null));
                    shapes.Add(new Shape($"{callers} threads, 1 connection", transport, loaded, null, threads));
                }
            }
            // Warm-up: a short run of every shape, not reported (tiered JIT in all processes).
            foreach (Shape shape in shapes.Where(s => !s.Loaded))
            {
                _ = shape.RunOnce(Math.Min(ms, 300));
            }
            for (int round = 1; round <= rounds; round++)
            {
                // Alternate the order: shm first in odd rounds, tcp first in even ones.
                IEnumerable<Shape> order = round % 2 == 1 ? shapes : shapes.OrderBy(s => s.Loaded).ThenBy(s => s.Transport == "shm");
                BusyLoad? busy = null;
                try
                {
                    foreach (Shape shape in order)
                    {
                        if (shape.Loaded && busy is null)
                        {
                            busy = BusyLoad.Start(load);
                        }
                        RunResult result = shape.RunOnce(ms);
                        shape.Results.Add(result);
                        Console.WriteLine($"round {round}: {shape.Label(load),-48} {result.CallsPerSecond,10:N0} calls/s  p50 {result.Latency.Percentile(0.5) / 1000,8:0.0} µs  p99 {result.Latency.Percentile(0.99) / 1000,8:0.0} µs");
                    }
                }
                finally
                {
                    busy?.Dispose();
                }
            }
            var summary = new List<string> { $"Concurrency suite: {callers} client processes and {callers} threads on one connection, {rounds} rounds of {ms} ms per row; {machine}", "" };
            List<CallResult> rows = Report(shapes, callers, load, rounds, summary);
            IReadOnlyList<CallResult> final = ResultWriter.WithRatios(rows);
            string dir = outDir ?? Path.Combine(Path.GetTempPath(), "xcall-concurrency-" + DateTime.UtcNow.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture));
            ResultWriter.WriteFiles(dir, final, machine);
            File.WriteAllLines(Path.Combine(dir, "calls.md"), summary); // the call-cost table has no columns for these rows
            Console.WriteLine($"Results written to {Path.GetFullPath(dir)}");
            return 0;
        }
        finally
        {
            foreach (ChildServer client in clients)
            {
                client.Dispose();
            }
        }
    }

    /// <summary>The summary: per shape the median round's calls/s and the percentiles of all rounds' calls; the budgets.</summary>
    private static List<CallResult> Report(List<Shape> shapes, int callers, int load, int rounds, List<string> summary)
    {
        var rows = new List<CallResult>();
        void Line(string line)
        {
            Console.WriteLine(line);
            summary.Add(line);
        }
        Console.WriteLine();
        Line($"median of {rounds} rounds (calls/s); p50 and p99 over every call of every round:");
        Line("");
        Line("```");
        foreach (Shape shape in shapes)
        {
            var all = new LatencyHistogram();
            foreach (RunResult r in shape.Results)
            {
                all.Add(r.Latency);
            }
            shape.MedianCallsPerSecond = shape.Results.Select(r => r.CallsPerSecond).Order().ElementAt(shape.Results.Count / 2);
            shape.P50 = all.Percentile(0.5);
            shape.P99 = all.Percentile(0.99);
            string label = shape.Label(load);
            Line($"{label,-48} {shape.MedianCallsPerSecond,10:N0} calls/s  p50 {shape.P50 / 1000,8:0.0} µs  p99 {shape.P99 / 1000,8:0.0} µs  p99/p50 {shape.P99 / shape.P50,5:0.0}");
            rows.Add(new CallResult($"int x{callers} {shape.Name.Replace($"{callers} ", "", StringComparison.Ordinal)}", shape.Transport + (shape.Loaded ? $" ({load} busy)" : ""), 1e9 / shape.MedianCallsPerSecond, null)
            {
                Note = string.Create(CultureInfo.InvariantCulture, $"{label}: {shape.MedianCallsPerSecond:0} calls/s in total (ns per call = 1e9 / that), p50 {shape.P50:0} ns, p99 {shape.P99:0} ns per call; default server settings{(shape.Transport == "tcp" ? ", tcp clients with PreferSharedMemory=false" : "")}"),
            });
        }
        Line("```");
        Line("");
        foreach (IGrouping<(string Name, bool Loaded), Shape> pair in shapes.GroupBy(s => (s.Name, s.Loaded)))
        {
            Shape shm = pair.Single(s => s.Transport == "shm");
            Shape tcp = pair.Single(s => s.Transport == "tcp");
            double ratio = shm.MedianCallsPerSecond / tcp.MedianCallsPerSecond;
            string where = pair.Key.Name + (pair.Key.Loaded ? $", {load} busy threads" : "");
            Line($"- budget {where}: shm calls/s {ratio:0.00}x tcp's (>= 2x: {Verdict(ratio >= 2)}); shm p99/p50 {shm.P99 / shm.P50:0.0} (<= 10: {Verdict(shm.P99 <= 10 * shm.P50)}), tcp's {tcp.P99 / tcp.P50:0.0}");
        }
        return rows;
    }

    private static string Verdict(bool met) => met ? "met" : "NOT met";

    /// <summary>One run's total rate and the latencies of its calls.</summary>
    internal sealed record RunResult(double CallsPerSecond, LatencyHistogram Latency);

    /// <summary>A way of calling (processes or threads) over one transport, with or without the busy load.</summary>
    private sealed class Shape(string name, string transport, bool loaded, List<ChildServer>? processes, ThreadCallers? threads)
    {
        public string Name => name;

        public string Transport => transport;

        public bool Loaded => loaded;

        public List<RunResult> Results { get; } = [];

        public double MedianCallsPerSecond { get; set; }

        public double P50 { get; set; }

        public double P99 { get; set; }

        public string Label(int load) => $"{transport} {name}" + (loaded ? $", {load} busy threads" : "");

        public RunResult RunOnce(int ms) => processes is not null ? RunProcesses(processes, transport, ms) : threads!.Run(transport, ms);
    }

    /// <summary>Every client process calls for <paramref name="ms"/> ms at once; the rate is over the parent's wall time.</summary>
    private static RunResult RunProcesses(List<ChildServer> clients, string transport, int ms)
    {
        long start = Stopwatch.GetTimestamp();
        foreach (ChildServer client in clients)
        {
            client.Process.StandardInput.WriteLine($"RUN {transport} {ms}");
            client.Process.StandardInput.Flush();
        }
        var all = new LatencyHistogram();
        foreach (ChildServer client in clients)
        {
            all.Add(LatencyHistogram.Parse(client.ReadAnswer("DONE ")));
        }
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        return new RunResult(all.Count / seconds, all);
    }
}
