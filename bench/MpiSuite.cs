using System.Diagnostics;
using System.Globalization;
using XCall.Bench.Peers;
using XCall.Communicator;

namespace XCall.Bench;

/// <summary>
/// <c>--suite mpi</c>: XCall.Communicator next to Open MPI in the same run: the ping-pong between two ranks at
/// 4 B, 1000 B, 16 KiB, 64 KiB, 256 KiB and 1 MiB (Open MPI: Probes/mpi_pingpong.c, the peer-mpi rows' program)
/// and Allreduce (sum of doubles) on 4 ranks from 8 B to 8 MiB (Probes/mpi_allreduce.c). The communicator's ranks are this program
/// started as a world (XCall's rank variables, what <c>xcall run</c> sets), with every default. Open MPI's rows
/// are skipped with the reason printed when it is not installed.
/// </summary>
internal static class MpiSuite
{
    private static readonly (int Bytes, long Rounds)[] s_pingPong = [(4, 100_000), (1000, 50_000), (16 << 10, 20_000), (64 << 10, 5_000), (256 << 10, 1_000), (1 << 20, 200)];
    private static readonly (int Bytes, long Rounds)[] s_allreduce = [(8, 20_000), (1 << 10, 10_000), (64 << 10, 1_000), (1 << 20, 100), (8 << 20, 10)];
    private const int AllreduceRanks = 4;

    public const string Usage = """
        usage: dotnet run -c Release --project bench -- --suite mpi [--rounds-scale X]
          --rounds-scale X   multiplies every size's round count (default 1; 0.1 for a quick look)
        """;

    public static int Run(string[] args)
    {
        if (args.Length > 0 && args[0] == "--rank")
        {
            return RankAsync(args[1..]).GetAwaiter().GetResult();
        }
        double scale = 1;
        if (args is ["--rounds-scale", string s])
        {
            scale = double.Parse(s, CultureInfo.InvariantCulture);
        }
        else if (args.Length > 0)
        {
            Console.Error.WriteLine(Usage);
            return 2;
        }
        (int Bytes, long Rounds)[] pingPong = Scale(s_pingPong, scale);
        (int Bytes, long Rounds)[] allreduce = Scale(s_allreduce, scale);
        Console.WriteLine($"mpi suite: {Environment.ProcessorCount} cores; ns per round trip (ping-pong) and per Allreduce, best / median of 5 batches");

        Console.WriteLine("\nping-pong, 2 ranks");
        IReadOnlyList<MpiPingPong.Result> ours = World("pingpong", 2, pingPong);
        IReadOnlyList<MpiPingPong.Result>? peer = MpiPingPong.Measure(pingPong);
        Print(ours, peer, peer is null ? MpiPingPong.WhyNot : null, bandwidth: true);

        Console.WriteLine($"\nAllreduce (sum of doubles), {AllreduceRanks} ranks");
        IReadOnlyList<MpiPingPong.Result> oursAll = World("allreduce", AllreduceRanks, allreduce);
        IReadOnlyList<MpiPingPong.Result>? peerAll = MpiPingPong.MeasureAllreduce(AllreduceRanks, allreduce);
        Print(oursAll, peerAll, peerAll is null ? MpiPingPong.WhyNotAllreduce : null, bandwidth: false);
        return 0;
    }

    private static (int Bytes, long Rounds)[] Scale((int Bytes, long Rounds)[] sizes, double scale) =>
        [.. sizes.Select(s => (s.Bytes, Math.Max(2L, (long)(s.Rounds * scale))))];

    private static void Print(IReadOnlyList<MpiPingPong.Result> ours, IReadOnlyList<MpiPingPong.Result>? peer, string? whyNoPeer, bool bandwidth)
    {
        Console.WriteLine($"| bytes | xcall-comm ns (best / median) | open-mpi ns (best / median) | median ratio xcall / open-mpi |{(bandwidth ? " xcall GB/s | open-mpi GB/s |" : "")}");
        Console.WriteLine($"|---:|---:|---:|---:|{(bandwidth ? "---:|---:|" : "")}");
        foreach (MpiPingPong.Result x in ours)
        {
            MpiPingPong.Result? p = peer?.FirstOrDefault(r => r.Bytes == x.Bytes);
            string peerCell = p is null ? "skipped" : $"{p.BestNs:F0} / {p.MedianNs:F0}";
            string ratio = p is null ? "" : $"{x.MedianNs / p.MedianNs:F2}x";
            string rates = !bandwidth ? "" : $" {GBps(x):F2} | {(p is null ? "" : GBps(p).ToString("F2", CultureInfo.InvariantCulture))} |";
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {x.Bytes} | {x.BestNs:F0} / {x.MedianNs:F0} | {peerCell} | {ratio} |{rates}"));
        }
        if (whyNoPeer is not null)
        {
            Console.WriteLine($"open-mpi rows skipped: {whyNoPeer}");
        }
    }

    /// <summary>Bytes each way per second over the median round trip (a round trip moves the message twice).</summary>
    private static double GBps(MpiPingPong.Result r) => 2.0 * r.Bytes / r.MedianNs;

    /// <summary>Runs this program's <c>--rank</c> mode as a world of <paramref name="ranks"/> processes and parses rank 0's lines.</summary>
    private static IReadOnlyList<MpiPingPong.Result> World(string kind, int ranks, (int Bytes, long Rounds)[] sizes)
    {
        string job = $"bench-mpi-{Environment.ProcessId}-{kind}";
        var processes = new List<Process>();
        string self = typeof(MpiSuite).Assembly.Location;
        for (int rank = 0; rank < ranks; rank++)
        {
            var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true };
            foreach (string a in (string[])[self, "--suite", "mpi", "--rank", kind, .. sizes.Select(s => string.Create(CultureInfo.InvariantCulture, $"{s.Bytes}:{s.Rounds}"))])
            {
                start.ArgumentList.Add(a);
            }
            start.Environment["XCALL_RANK"] = rank.ToString(CultureInfo.InvariantCulture);
            start.Environment["XCALL_SIZE"] = ranks.ToString(CultureInfo.InvariantCulture);
            start.Environment["XCALL_JOB_ID"] = job;
            processes.Add(Process.Start(start)!);
        }
        Task<string>[] outputs = [.. processes.Select(p => p.StandardOutput.ReadToEndAsync())];
        Task<string>[] errors = [.. processes.Select(p => p.StandardError.ReadToEndAsync())];
        foreach (Process p in processes)
        {
            if (!p.WaitForExit(TimeSpan.FromMinutes(10)))
            {
                processes.ForEach(q => q.Kill(entireProcessTree: true));
                throw new TimeoutException($"the communicator's {kind} ranks did not finish within 10 minutes");
            }
        }
        var results = new List<MpiPingPong.Result>();
        foreach (string line in outputs[0].Result.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            string[] f = line.Split(' ');
            if (f.Length == 4 && f[0] == "xcall-comm")
            {
                results.Add(new MpiPingPong.Result(int.Parse(f[1], CultureInfo.InvariantCulture), double.Parse(f[2], CultureInfo.InvariantCulture), double.Parse(f[3], CultureInfo.InvariantCulture)));
            }
        }
        if (results.Count != sizes.Length || processes.Any(p => p.ExitCode != 0))
        {
            throw new InvalidOperationException($"the communicator's {kind} ranks failed (exit codes {string.Join(", ", processes.Select(p => p.ExitCode))}): {string.Join("\n", errors.Select(e => e.Result))}");
        }
        processes.ForEach(p => p.Dispose());
        return results;
    }

    /// <summary>One rank: warm-up chunks of ROUNDS / 10 for at least 600 ms, then 5 timed batches per size; rank 0 prints <c>xcall-comm BYTES BEST MEDIAN</c>.</summary>
    private static async Task<int> RankAsync(string[] args)
    {
        string kind = args[0];
        Communicator.Communicator c = await Communicator.Communicator.JoinAsync();
        foreach (string size in args[1..])
        {
            string[] parts = size.Split(':');
            int bytes = int.Parse(parts[0], CultureInfo.InvariantCulture);
            long rounds = long.Parse(parts[1], CultureInfo.InvariantCulture);
            Action<long> run = kind == "pingpong" ? PingPong(c, bytes) : Allreduce(c, bytes);
            WarmUp(c, run, rounds / 10 + 1);
            var ns = new double[5];
            for (int b = 0; b < ns.Length; b++)
            {
                c.Barrier();
                long start = Stopwatch.GetTimestamp();
                run(rounds);
                ns[b] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / rounds;
            }
            Array.Sort(ns);
            if (c.Rank == 0)
            {
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"xcall-comm {bytes} {ns[0]:F1} {ns[2]:F1}"));
            }
        }
        await c.DisposeAsync();
        return 0;
    }

    /// <summary>Runs warm-up chunks until rank 0 has spent <see cref="WarmUpTime"/> in them: the tiered JIT promotes
    /// the hot methods about 100 ms after their last new tier-0 call, so a warm-up counted in rounds alone can leave
    /// the timed batches of a fast size running tier-0 code while the C peer runs compiled code from its start.</summary>
    private static void WarmUp(Communicator.Communicator c, Action<long> run, long chunk)
    {
        long start = Stopwatch.GetTimestamp();
        bool more;
        do
        {
            c.Barrier();
            run(chunk);
            more = c.Broadcast(c.Rank == 0 && Stopwatch.GetElapsedTime(start) < WarmUpTime, 0);
        }
        while (more);
    }

    private static readonly TimeSpan WarmUpTime = TimeSpan.FromMilliseconds(600);

    private static Action<long> PingPong(Communicator.Communicator c, int bytes)
    {
        var buffer = new byte[bytes];
        return rounds =>
        {
            for (long i = 0; i < rounds; i++)
            {
                if (c.Rank == 0)
                {
                    c.Send(buffer, 1, 0);
                    c.Receive<byte>(buffer, 1, 0);
                }
                else
                {
                    c.Receive<byte>(buffer, 0, 0);
                    c.Send(buffer, 0, 0);
                }
            }
        };
    }

    private static Action<long> Allreduce(Communicator.Communicator c, int bytes)
    {
        double[] send = [.. Enumerable.Range(0, bytes / 8).Select(i => (double)(c.Rank + i % 7))];
        var receive = new double[send.Length];
        ReduceOperation<double> sum = ReduceOperation.Sum<double>();
        return rounds =>
        {
            for (long i = 0; i < rounds; i++)
            {
                c.Allreduce(send, receive, sum);
            }
        };
    }
}
