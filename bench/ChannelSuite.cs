using System.Globalization;
using System.Text;

namespace XCall.Bench;

/// <summary>
/// <c>--suite channels</c>: XCall.Channels next to its peers, each measured in the same run. Parts:
/// the Erlang ring (ChannelSuite.Ring.cs), CSP.NET's 3-process loop (ChannelSuite.Loop.cs), a select
/// over 8 channels against a plain read (ChannelSuite.Select.cs) and Monte Carlo Pi against the
/// sequential loop, on both cores and pinned to one (ChannelSuite.Pi.cs), and named channels between two
/// processes over shm and tcp against an XCall int call (ChannelSuite.Net.cs), and Monte Carlo Pi over 1-3 OS
/// processes with named constructs (ChannelSuite.NetPi.cs) and the 3-process loop in three OS processes
/// (ChannelSuite.NetLoop.cs), and Monte Carlo Pi shipped by DistParallel to worker ranks (ChannelSuite.DistPi.cs). Rows go to calls.json in the
/// main suite's format; the printed tables and the budget checks go to calls.md.
/// </summary>
internal static partial class ChannelSuite
{
    private static readonly string[] s_parts = ["ring", "loop", "select", "pi", "net", "netpi", "netloop", "distpi"];
    private static readonly string[] s_peers = ["xcall", "stc", "go", "erlang"];

    public const string Usage = """
        usage: dotnet run -c Release --project bench -- --suite channels [options]
          --parts LIST          ring,loop,select,pi,net,netpi,netloop,distpi (default: all)
          --sizes LIST          ring sizes N (default 1024,4096,16384,65536,262144)
          --laps M              laps of the ring's token (default 1000)
          --peers LIST          xcall,stc,go,erlang (default: all; go and erlang skipped when not on PATH)
          --loop-ints N         ints round the 3-process loop (default 500000, as CSP.NET's Table 1)
          --pi-iterations N     Monte Carlo Pi table 2: iterations split over 1 ... 600 processes (default 1.2e8)
          --pi-largest N        Monte Carlo Pi table 3: the largest of 1e3, 1e4, ... (default 1e8)
          --net-loop-ints N     ints round the 3-process loop in three OS processes (default 50000)
          --net-pi-darts N      distributed Monte Carlo Pi on 1, 2, 3 OS processes, named channels and
                                DistParallel: darts (default 1e9)
          --net-pi-rounds N     alternating rounds of the sequential loop and the processes, per process
                                count; the ratio is the median of the rounds' (default 3)
          --out DIR             write calls.json, calls.md, calls.csv there (default: a new folder it prints)
        """;

    /// <summary>The path of this program, for the child processes the parts start.</summary>
    private static string Self => typeof(ChannelSuite).Assembly.Location;

    public static int Run(string[] args)
    {
        if (args.Length > 0 && args[0] == "--child")
        {
            return Child(args[1..]);
        }
        if (args is ["-h"] or ["--help"])
        {
            Console.WriteLine(Usage);
            return 0;
        }
        SuiteOptions options;
        try
        {
            options = SuiteOptions.Parse(args);
        }
        catch (ArgumentException ex)
        {
            Console.Error.WriteLine($"{ex.Message}\n{Usage}");
            return 2;
        }

        string machine = Machine.Describe();
        var log = new SuiteLog();
        var results = new List<CallResult>();
        string work = Directory.CreateTempSubdirectory("xcall-channels-").FullName;
        try
        {
            log.Line($"Channels suite; {machine}");
            if (options.Parts.Contains("ring"))
            {
                RunRings(options, work, log, results);
            }
            if (options.Parts.Contains("loop"))
            {
                RunLoops(options, work, log, results);
            }
            if (options.Parts.Contains("select"))
            {
                RunSelect(log, results);
            }
            if (options.Parts.Contains("pi"))
            {
                RunPi(options, log, results);
            }
            if (options.Parts.Contains("net"))
            {
                RunNet(log, results);
            }
            if (options.Parts.Contains("netpi"))
            {
                RunNetPi(options, log, results);
            }
            if (options.Parts.Contains("netloop"))
            {
                RunNetLoop(options, log, results);
            }
            if (options.Parts.Contains("distpi"))
            {
                RunDistPi(options, log, results);
            }
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }

        string report = log.Finish(machine);
        string outDir = options.OutDirectory ?? Path.Combine(Path.GetTempPath(), "xcall-bench-channels-" + DateTime.UtcNow.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture));
        Directory.CreateDirectory(outDir);
        ResultWriter.WriteJson(Path.Combine(outDir, "calls.json"), results);
        ResultWriter.WriteCsv(Path.Combine(outDir, "calls.csv"), results);
        File.WriteAllText(Path.Combine(outDir, "calls.md"), report);
        Console.WriteLine($"Results written to {Path.GetFullPath(outDir)} (calls.json, calls.md, calls.csv)");
        return results.Count > 0 ? 0 : 1;
    }

    private static int Child(string[] args) => args switch
    {
        ["ring", string peer, string n, string laps] => RingChild(peer, Parse(n), Parse(laps)),
        ["pi", string iterations, string largest] => PiChild(ParseLong(iterations), ParseLong(largest)),
        ["net-peer", string transport] => NetPeer(transport),
        ["net-pi", string darts] => NetPiChild(ParseLong(darts)),
        ["dist-pi", string darts] => DistPiChild(ParseLong(darts)),
        ["net-loop", string ints] => NetLoopChild(Parse(ints)),
        _ => Fail($"Unknown child arguments: {string.Join(' ', args)}"),
    };

    private static int Fail(string message)
    {
        Console.Error.WriteLine(message);
        return 2;
    }

    private static double Median(IEnumerable<double> values)
    {
        double[] sorted = [.. values.Order()];
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }

    private static double Number(string s) => double.Parse(s, CultureInfo.InvariantCulture);

    private static int Parse(string s) => int.Parse(s, CultureInfo.InvariantCulture);

    /// <summary>An integer that may be written as 1.2e8 or 120,000,000.</summary>
    private static long ParseLong(string s) => (long)double.Parse(s, NumberStyles.Float | NumberStyles.AllowThousands, CultureInfo.InvariantCulture);

    private static string Text(long value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Format(double value, string format) => value.ToString(format, CultureInfo.InvariantCulture);

    /// <summary>The suite's options; see <see cref="Usage"/>.</summary>
    private sealed record SuiteOptions
    {
        public string[] Parts { get; init; } = s_parts;
        public int[] Sizes { get; init; } = [1024, 4096, 16384, 65536, 262144];
        public int Laps { get; init; } = 1000;
        public string[] Peers { get; init; } = s_peers;
        public int LoopInts { get; init; } = 500_000;
        public long PiIterations { get; init; } = 120_000_000;
        public long PiLargest { get; init; } = 100_000_000;
        public long NetPiDarts { get; init; } = 1_000_000_000;
        public int NetPiRounds { get; init; } = 3;
        public int NetLoopInts { get; init; } = 50_000;
        public string? OutDirectory { get; init; }

        public static SuiteOptions Parse(string[] args)
        {
            var options = new SuiteOptions();
            for (int i = 0; i < args.Length; i++)
            {
                string Next() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{args[i]} needs a value.");
                options = args[i] switch
                {
                    "--parts" => options with { Parts = BenchOptions.Split(Next(), s_parts, "part") },
                    "--sizes" => options with { Sizes = [.. Next().Split(',').Select(ChannelSuite.Parse)] },
                    "--laps" => options with { Laps = ChannelSuite.Parse(Next()) },
                    "--peers" => options with { Peers = BenchOptions.Split(Next(), s_peers, "peer") },
                    "--loop-ints" => options with { LoopInts = (int)ParseLong(Next()) },
                    "--pi-iterations" => options with { PiIterations = ParseLong(Next()) },
                    "--pi-largest" => options with { PiLargest = ParseLong(Next()) },
                    "--net-pi-darts" => options with { NetPiDarts = ParseLong(Next()) },
                    "--net-pi-rounds" => options with { NetPiRounds = Math.Max(1, ChannelSuite.Parse(Next())) },
                    "--net-loop-ints" => options with { NetLoopInts = (int)ParseLong(Next()) },
                    "--out" => options with { OutDirectory = Next() },
                    _ => throw new ArgumentException($"Unknown option {args[i]}."),
                };
            }
            return options;
        }
    }

    /// <summary>What the suite prints, kept for calls.md, and the issue's budgets checked against the run.</summary>
    private sealed class SuiteLog
    {
        private readonly StringBuilder _text = new();
        private readonly List<string> _budgets = [];

        public void Line(string line = "")
        {
            Console.WriteLine(line);
            _text.AppendLine(line);
        }

        /// <summary>Records a budget: <paramref name="value"/> must be at most <paramref name="limit"/>.</summary>
        public void Budget(string measure, double value, double limit, string detail)
        {
            string verdict = value <= limit ? "met" : "missed";
            _budgets.Add($"- {measure}: {Format(value, "0.000")} (budget <= {Format(limit, "0.00")}): {verdict}; {detail}");
        }

        public string Finish(string machine)
        {
            Line();
            Line("Budgets (issues 21 and 23):");
            foreach (string budget in _budgets)
            {
                Line(budget);
            }
            Line();
            Line($"Machine: {machine}");
            return _text.ToString();
        }
    }
}
