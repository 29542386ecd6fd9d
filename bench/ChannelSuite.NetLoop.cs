using System.Diagnostics;
using System.Globalization;
using XCall.Channels;
using XCall.Channels.Distributed;

namespace XCall.Bench;

/// <summary>
/// CSP.NET's Table 1 with its three processes in three OS processes: rank r reads the named One2One
/// "loop-r" it hosts and writes to "loop-(r+1)" of the next rank over shared memory; rank 0 sends the next
/// int when the last came round. Against the in-process One2One loop measured just before, in this process.
/// </summary>
internal static partial class ChannelSuite
{
    private static void RunNetLoop(SuiteOptions options, SuiteLog log, List<CallResult> results)
    {
        int ints = options.NetLoopInts;
        LoopXCall("One2One", ints / 10);
        var local = new List<double>();
        var distributed = new List<double>();
        for (int run = 0; run < 3; run++)
        {
            local.Add(LoopXCall("One2One", ints));
            if (RunRanks(3, "net-loop", Text(ints)) is { } ms)
            {
                distributed.Add(ms);
            }
        }
        log.Line();
        log.Line($"3-process loop (CSP.NET Table 1) with each process in its own OS process: {ints:N0} ints over named One2One channels (shm), median of 3 alternating runs");
        log.Line("| loop | ms | ns per int round the loop | x in-process |");
        log.Line("|---|---:|---:|---:|");
        double inProcess = Median(local);
        log.Line($"| in-process One2One | {inProcess:0} | {inProcess * 1e6 / ints:0} | 1.00 |");
        if (distributed.Count == 0)
        {
            log.Line("| three OS processes | failed | | |");
            return;
        }
        double across = Median(distributed);
        log.Line($"| three OS processes, named One2One | {across:0} | {across * 1e6 / ints:0} | {Format(across / inProcess, "0.00")} |");
        results.Add(new CallResult("net-loop3-one2one", "shm", across * 1e6 / ints, null) { RatioToLocal = across / inProcess });
    }

    /// <summary>One rank of the loop; rank 0 reports the ms of <paramref name="ints"/> laps.</summary>
    private static int NetLoopChild(int ints)
    {
        return RunAsync().GetAwaiter().GetResult();

        async Task<int> RunAsync()
        {
            await using CspWorld csp = await CspWorld.JoinAsync();
            One2One<int> input = await csp.CreateOne2OneAsync<int>($"loop-{csp.Rank}");
            IChannelOut<int> output = await csp.OpenOutAsync<int>($"loop-{(csp.Rank + 1) % csp.Size}");
            if (csp.Rank != 0)
            {
                for (int i = 0; i < ints + 1; i++)
                {
                    output.Write(input.In.Read());
                }
                return 0;
            }
            output.Write(-1); // one lap to warm the path
            input.In.Read();
            long begin = Stopwatch.GetTimestamp();
            for (int i = 0; i < ints; i++)
            {
                output.Write(i);
                input.In.Read();
            }
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RESULT {Stopwatch.GetElapsedTime(begin).TotalMilliseconds:0.0}"));
            return 0;
        }
    }
}
