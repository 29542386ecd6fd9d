using System.Diagnostics;
using System.Globalization;
using System.Threading.Channels;
using XCall.Channels;

namespace XCall.Bench;

/// <summary>
/// <c>--suite channels</c>: the Erlang ring (N processes, M laps of one token) on XCall.Channels'
/// One2One, on System.Threading.Channels' rendezvous channel (Channel.CreateBounded(0)) as the
/// baseline, and on Go and Erlang when they are installed. Each row runs in a fresh process, so
/// the peak working set is that ring's alone.
/// </summary>
internal static class ChannelSuite
{
    private static readonly string[] s_peers = ["xcall", "stc", "go", "erlang"];

    public const string Usage = """
        usage: dotnet run -c Release --project bench -- --suite channels [options]
          --sizes LIST   ring sizes N (default 1024,4096,16384,65536,262144)
          --laps M       laps of the token (default 1000)
          --peers LIST   xcall,stc,go,erlang (default: all; go and erlang skipped when not on PATH)
        """;

    public static int Run(string[] args)
    {
        if (args.Length == 4 && args[0] == "--child")
        {
            return Child(args[1], Parse(args[2]), Parse(args[3]));
        }
        int[] sizes = [1024, 4096, 16384, 65536, 262144];
        int laps = 1000;
        string[] peers = s_peers;
        for (int i = 0; i < args.Length; i++)
        {
            string Next() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{args[i]} needs a value.");
            switch (args[i])
            {
                case "--sizes": sizes = [.. Next().Split(',').Select(Parse)]; break;
                case "--laps": laps = Parse(Next()); break;
                case "--peers": peers = Next().Split(','); break;
                default:
                    Console.Error.WriteLine($"Unknown option {args[i]}.\n{Usage}");
                    return 2;
            }
        }
        string work = Directory.CreateTempSubdirectory("xcall-ring-").FullName;
        var runners = new Dictionary<string, Func<int, int, string?>>();
        foreach (string peer in peers)
        {
            Func<int, int, string?>? runner = peer switch
            {
                "xcall" or "stc" => (n, m) => Capture("dotnet", [typeof(ChannelSuite).Assembly.Location, "--suite", "channels", "--child", peer, Text(n), Text(m)]),
                "go" => GoRunner(work),
                "erlang" => ErlangRunner(),
                _ => throw new ArgumentException($"Unknown peer {peer} (known: {string.Join(", ", s_peers)})."),
            };
            if (runner is not null)
            {
                runners[peer] = runner;
            }
        }

        Console.WriteLine($"Ring: N processes, M = {laps} laps; {Machine.Describe()}");
        Console.WriteLine("| N | implementation | ns per hop | ratio to stc | peak working set | bytes per process |");
        Console.WriteLine("|---:|---|---:|---:|---:|---:|");
        foreach (int n in sizes)
        {
            var rows = new List<(string Peer, string[]? Fields, string? Line)>();
            foreach ((string peer, Func<int, int, string?> runner) in runners)
            {
                string? line = runner(n, laps);
                rows.Add((peer, line?.Split(' ') is ["RESULT", _, _, _] fields ? fields : null, line));
            }
            double? baseline = rows.Where(r => r.Peer == "stc" && r.Fields is not null).Select(r => (double?)Number(r.Fields![1])).FirstOrDefault();
            foreach ((string peer, string[]? fields, string? line) in rows)
            {
                if (fields is null)
                {
                    Console.WriteLine($"| {n:N0} | {peer} | failed: {line ?? "no output"} | | | |");
                    continue;
                }
                double hop = Number(fields[1]);
                string ratio = baseline is double b ? (hop / b).ToString("0.00", CultureInfo.InvariantCulture) : "";
                Console.WriteLine($"| {n:N0} | {peer} | {hop:0.0} | {ratio} | {(long)Number(fields[2]) >> 20} MiB | {fields[3]} |");
            }
        }
        return 0;
    }

    private static Func<int, int, string?>? GoRunner(string work)
    {
        string binary = Path.Combine(work, "ring-go");
        string source = Path.Combine(AppContext.BaseDirectory, "Peers", "ring.go");
        if (Capture("go", ["build", "-o", binary, source], expectResult: false) is null || !File.Exists(binary))
        {
            Console.WriteLine("// go: skipped (no `go` on PATH, or the build failed)");
            return null;
        }
        return (n, m) => Capture(binary, [Text(n), Text(m)]);
    }

    private static Func<int, int, string?>? ErlangRunner()
    {
        string script = Path.Combine(AppContext.BaseDirectory, "Peers", "ring.escript");
        if (Capture("escript", [script, "2", "1"]) is null)
        {
            Console.WriteLine("// erlang: skipped (no `escript` on PATH)");
            return null;
        }
        return (n, m) => Capture("escript", [script, Text(n), Text(m)]);
    }

    /// <summary>Runs a program; returns its RESULT line (or, with <paramref name="expectResult"/> false, "" on success), null when it cannot start or fails.</summary>
    private static string? Capture(string program, string[] args, bool expectResult = true)
    {
        try
        {
            using Process p = Process.Start(new ProcessStartInfo(program, args) { RedirectStandardOutput = true, RedirectStandardError = true })!;
            Task<string> error = p.StandardError.ReadToEndAsync();
            string output = p.StandardOutput.ReadToEnd();
            p.WaitForExit();
            if (p.ExitCode != 0)
            {
                Console.Error.WriteLine($"// {program} exited with {p.ExitCode}: {error.Result.Trim()}");
                return null;
            }
            return expectResult ? output.Split('\n').FirstOrDefault(l => l.StartsWith("RESULT ", StringComparison.Ordinal)) : "";
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return null;
        }
    }

    private static int Child(string peer, int n, int laps)
    {
        // Warm-up on a small ring, so the measured ring runs tier-1 code rather than the JIT's first tier.
        for (int round = 0; round < 3; round++)
        {
            RunRing(peer, 256, 2000);
        }
        (double ns, long bytesPerProcess) = RunRing(peer, n, laps);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RESULT {ns:0.0} {Process.GetCurrentProcess().PeakWorkingSet64} {bytesPerProcess}"));
        return 0;
    }

    /// <summary>Builds a ring of <paramref name="n"/> processes, runs the laps; ns per hop and managed bytes per waiting process.</summary>
    private static (double NsPerHop, long BytesPerProcess) RunRing(string peer, int n, int laps)
    {
        long before = GC.GetTotalMemory(forceFullCollection: true);
        IRingLink[] links = [.. Enumerable.Range(0, n).Select(_ => peer == "xcall" ? (IRingLink)new XCallLink() : new RendezvousLink())];
        int started = 0;
        var forwarders = new Task[n - 1];
        for (int i = 1; i < n; i++)
        {
            IRingLink input = links[i - 1];
            IRingLink output = links[i];
            forwarders[i - 1] = Task.Run(async () =>
            {
                Interlocked.Increment(ref started);
                for (int lap = 0; lap < laps; lap++)
                {
                    await output.WriteAsync(await input.ReadAsync());
                }
            });
        }
        while (Volatile.Read(ref started) < n - 1)
        {
            Thread.Yield();
        }
        long built = GC.GetTotalMemory(forceFullCollection: true);
        long start = Stopwatch.GetTimestamp();
        Task.Run(async () =>
        {
            for (int lap = 0; lap < laps; lap++)
            {
                await links[0].WriteAsync(lap);
                await links[n - 1].ReadAsync();
            }
        }).Wait();
        double ns = Stopwatch.GetElapsedTime(start).TotalNanoseconds / ((double)n * laps);
        Task.WaitAll(forwarders);
        return (ns, (built - before) / (n - 1));
    }

    private static double Number(string s) => double.Parse(s, CultureInfo.InvariantCulture);

    private static int Parse(string s) => int.Parse(s, CultureInfo.InvariantCulture);

    private static string Text(int value) => value.ToString(CultureInfo.InvariantCulture);

    private interface IRingLink
    {
        ValueTask<int> ReadAsync();

        ValueTask WriteAsync(int value);
    }

    private sealed class XCallLink : IRingLink
    {
        private readonly One2One<int> _channel = new();

        public ValueTask<int> ReadAsync() => _channel.In.ReadAsync();

        public ValueTask WriteAsync(int value) => _channel.Out.WriteAsync(value);
    }

    private sealed class RendezvousLink : IRingLink
    {
        private readonly Channel<int> _channel = Channel.CreateBounded<int>(0);

        public ValueTask<int> ReadAsync() => _channel.Reader.ReadAsync();

        public ValueTask WriteAsync(int value) => _channel.Writer.WriteAsync(value);
    }
}
