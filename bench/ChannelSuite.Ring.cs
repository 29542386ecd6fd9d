using System.Diagnostics;
using System.Globalization;
using System.Threading.Channels;
using XCall.Channels;

namespace XCall.Bench;

/// <summary>
/// The Erlang ring: N processes, M laps of one token, on XCall.Channels' One2One, on
/// System.Threading.Channels' rendezvous channel (Channel.CreateBounded(0)) as the baseline, and on
/// Go and Erlang when they are installed. Each row runs in a fresh process, so the peak working set
/// is that ring's alone.
/// </summary>
internal static partial class ChannelSuite
{
    /// <summary>The ring size the issue's budgets are set at.</summary>
    private const int BudgetRingSize = 262_144;

    private static void RunRings(SuiteOptions options, string work, SuiteLog log, List<CallResult> results)
    {
        var runners = new Dictionary<string, Func<int, int, string?>>();
        foreach (string peer in options.Peers)
        {
            Func<int, int, string?>? runner = peer switch
            {
                "xcall" or "stc" => (n, m) => Capture("dotnet", [Self, "--suite", "channels", "--child", "ring", peer, Text(n), Text(m)]),
                "go" => BuildGo(work, "ring.go", log) is string binary ? (n, m) => Capture(binary, [Text(n), Text(m)]) : null,
                _ => ErlangRunner(log),
            };
            if (runner is not null)
            {
                runners[peer] = runner;
            }
        }

        log.Line();
        log.Line($"Ring: N processes, M = {options.Laps} laps of one token");
        log.Line("| N | implementation | ns per hop | x stc | peak working set | peak / N | managed bytes per process |");
        log.Line("|---:|---|---:|---:|---:|---:|---:|");
        foreach (int n in options.Sizes)
        {
            var rows = new List<(string Peer, string[]? Fields, string? Line)>();
            foreach ((string peer, Func<int, int, string?> runner) in runners)
            {
                string? line = runner(n, options.Laps);
                rows.Add((peer, line?.Split(' ') is ["RESULT", _, _, _] fields ? fields : null, line));
            }
            double? Hop(string peer) => rows.Where(r => r.Peer == peer && r.Fields is not null).Select(r => (double?)Number(r.Fields![1])).FirstOrDefault();
            double? baseline = Hop("stc");
            foreach ((string peer, string[]? fields, string? line) in rows)
            {
                if (fields is null)
                {
                    log.Line($"| {n:N0} | {peer} | failed: {line ?? "no output"} | | | | |");
                    continue;
                }
                double hop = Number(fields[1]);
                long peak = (long)Number(fields[2]);
                string ratio = baseline is double b ? Format(hop / b, "0.00") : "";
                log.Line($"| {n:N0} | {peer} | {hop:0.0} | {ratio} | {peak >> 20} MiB | {peak / n:N0} B | {fields[3]} |");
                results.Add(new CallResult($"ring-n{n}", peer, hop, null) { RatioToLocal = baseline is double s ? hop / s : null });
                if (peer == "xcall" && n == BudgetRingSize)
                {
                    log.Budget($"ring N = {n:N0}, M = {options.Laps}: peak working set per process, KB", peak / (double)n / 1024, 1.0, $"{peak >> 20} MiB peak for {n:N0} processes (the runtime's own ~30-60 MiB included)");
                }
            }
            if (n == BudgetRingSize && Hop("xcall") is double xcall)
            {
                if (Hop("go") is double go)
                {
                    log.Budget($"ring N = {n:N0}, M = {options.Laps}: XCall / Go", xcall / go, 1.0, $"{xcall:0.0} vs {go:0.0} ns per hop (aim: 0.5)");
                }
                if (Hop("erlang") is double erlang)
                {
                    log.Budget($"ring N = {n:N0}, M = {options.Laps}: XCall / Erlang", xcall / erlang, 0.5, $"{xcall:0.0} vs {erlang:0.0} ns per hop");
                }
            }
        }
    }

    private static Func<int, int, string?>? ErlangRunner(SuiteLog log)
    {
        string script = Path.Combine(AppContext.BaseDirectory, "Peers", "ring.escript");
        if (Capture("escript", [script, "2", "1"]) is null)
        {
            log.Line("// erlang: skipped (no `escript` on PATH)");
            return null;
        }
        return (n, m) => Capture("escript", [script, Text(n), Text(m)]);
    }

    private static int RingChild(string peer, int n, int laps)
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
        ILink[] links = [.. Enumerable.Range(0, n).Select(_ => peer == "xcall" ? (ILink)new XCallLink(new One2One<int>()) : new RendezvousLink())];
        var forwarders = new Task[n - 1];
        for (int i = 1; i < n; i++)
        {
            // A process is an async method, as in Go (go forward) and Erlang (spawn): started here, it
            // runs to its first read and waits there, holding no thread and nothing but its own state.
            forwarders[i - 1] = ForwardAsync(links[i - 1], links[i], laps);
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

    private static async Task ForwardAsync(ILink input, ILink output, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await output.WriteAsync(await input.ReadAsync());
        }
    }

    /// <summary>One channel of the ring or the loop, whichever library it comes from.</summary>
    private interface ILink
    {
        ValueTask<int> ReadAsync();

        ValueTask WriteAsync(int value);
    }

    private sealed class XCallLink(CspChannel<int> channel) : ILink
    {
        private readonly CspChannel<int> _channel = channel;

        public ValueTask<int> ReadAsync() => _channel.In.ReadAsync();

        public ValueTask WriteAsync(int value) => _channel.Out.WriteAsync(value);
    }

    private sealed class RendezvousLink : ILink
    {
        private readonly Channel<int> _channel = Channel.CreateBounded<int>(0);

        public ValueTask<int> ReadAsync() => _channel.Reader.ReadAsync();

        public ValueTask WriteAsync(int value) => _channel.Writer.WriteAsync(value);
    }
}
