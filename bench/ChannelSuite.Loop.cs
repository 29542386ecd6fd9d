using System.Diagnostics;
using XCall.Channels;

namespace XCall.Bench;

/// <summary>
/// CSP.NET's Table 1: process A sends an int to B, B to C, C back to A, and A sends the next one
/// when the last has come round; 500,000 ints. XCall for each channel kind, next to
/// System.Threading.Channels' rendezvous channel with async tasks and to Go's unbuffered channels.
/// </summary>
internal static partial class ChannelSuite
{
    private static readonly string[] s_kinds = ["One2One", "Any2One", "One2Any", "Any2Any"];

    /// <summary>Timed runs of each implementation, alternated; the median counts.</summary>
    private const int LoopRuns = 5;

    private static void RunLoops(SuiteOptions options, string work, SuiteLog log, List<CallResult> results)
    {
        int ints = options.LoopInts;
        bool stc = options.Peers.Contains("stc");
        string? go = options.Peers.Contains("go") ? BuildGo(work, "loop.go", log) : null;

        // Warm-up: every path runs tier-1 code before anything is timed.
        foreach (string kind in s_kinds)
        {
            LoopXCall(kind, ints / 10);
        }
        if (stc)
        {
            LoopStc(ints / 10);
        }
        // Rounds alternate every implementation, Go's process included (one warm-up and one timed run per
        // call), in an order that rotates, so each pair faces the same load on a shared machine.
        var xcallRuns = s_kinds.ToDictionary(k => k, _ => new List<double>());
        var stcRuns = new List<double>();
        var goRuns = new List<double>();
        for (int run = 0; run < LoopRuns; run++)
        {
            for (int k = 0; k < s_kinds.Length; k++)
            {
                string kind = s_kinds[(run + k) % s_kinds.Length];
                xcallRuns[kind].Add(LoopXCall(kind, ints));
            }
            if (stc)
            {
                stcRuns.Add(LoopStc(ints));
            }
            if (go is not null && Capture(go, [Text(ints), "1"])?.Split(' ') is ["RESULT", string goResult])
            {
                goRuns.Add(Number(goResult));
            }
        }
        double? goMs = goRuns.Count > 0 ? Median(goRuns) : null;
        double? stcMs = stc ? Median(stcRuns) : null;

        log.Line();
        log.Line($"3-process loop (CSP.NET Table 1): {ints:N0} ints round A -> B -> C -> A, median of {LoopRuns} alternating rounds");
        log.Line("| channel | implementation | ms | ns per int round the loop | x Go | x stc |");
        log.Line("|---|---|---:|---:|---:|---:|");
        void Row(string channel, string implementation, string signature, double ms)
        {
            double ns = ms * 1e6 / ints;
            log.Line($"| {channel} | {implementation} | {ms:0.0} | {ns:0.0} | {(goMs is double g ? Format(ms / g, "0.00") : "")} | {(stcMs is double s ? Format(ms / s, "0.00") : "")} |");
            results.Add(new CallResult(signature, implementation, ns, null) { RatioToLocal = stcMs is double b ? ms / b : null });
        }
        foreach (string kind in s_kinds)
        {
            Row(kind, "xcall", $"loop3-{kind.ToLowerInvariant()}", Median(xcallRuns[kind]));
        }
        if (stcMs is double stcTime)
        {
            Row("rendezvous", "stc", "loop3", stcTime);
        }
        if (goMs is double goTime)
        {
            Row("unbuffered", "go", "loop3", goTime);
            if (goRuns.Count == LoopRuns)
            {
                double[] ratios = [.. xcallRuns["One2One"].Zip(goRuns, (x, g) => x / g)];
                log.Budget("3-process loop, One2One: XCall / Go (median of the rounds' ratios)", Median(ratios), 1.0, $"medians {Median(xcallRuns["One2One"]):0.0} vs {goTime:0.0} ms for {ints:N0} ints; rounds {string.Join(", ", ratios.Select(r => Format(r, "0.00")))}");
            }
        }
    }

    private static CspChannel<int> NewChannel(string kind) => kind switch
    {
        "One2One" => new One2One<int>(),
        "Any2One" => new Any2One<int>(),
        "One2Any" => new One2Any<int>(),
        _ => new Any2Any<int>(),
    };

    /// <summary>The loop on three links made by <paramref name="link"/>; ms for <paramref name="ints"/> ints.</summary>
    private static double Loop(Func<ILink> link, int ints)
    {
        ILink[] c = [link(), link(), link()];
        Task b = Task.Run(() => ForwardAsync(c[0], c[1], ints));
        Task cc = Task.Run(() => ForwardAsync(c[1], c[2], ints));
        Task<double> a = Task.Run(async () =>
        {
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < ints; i++)
            {
                await c[0].WriteAsync(i);
                await c[2].ReadAsync();
            }
            return Stopwatch.GetElapsedTime(start).TotalMilliseconds;
        });
        Task.WaitAll(a, b, cc);
        return a.Result;
    }

    private static double LoopXCall(string kind, int ints) => Loop(() => new XCallLink(NewChannel(kind)), ints);

    private static double LoopStc(int ints) => Loop(() => new RendezvousLink(), ints);
}
