using System.Diagnostics;
using System.Globalization;
using XCall.Bench.Peers;

namespace XCall.Bench;

/// <summary>
/// Pairs XCall's <c>int</c> call with the machine-limit probe on one transport (shm: the spin probe; tcp: the
/// busy-polling TCP probe, the floor of the method XCall's tcp transport uses): short bursts of each,
/// alternating, so every pair faces the same load on a shared machine; the median of the per-round ratios
/// is the figure. Over shm the same rounds also pair the <c>int</c> burst with Open MPI's 4 B ping-pong
/// (<see cref="MpiPingPong"/>) when Open MPI is installed. Also counts the bytes both processes allocate per
/// call during the call bursts.
/// <c>--side-by-side shm|tcp [ROUNDS]</c> prints every round; the default run adds the summary rows.
/// </summary>
internal static class SideBySide
{
    /// <summary>The paired figures of one transport.</summary>
    public sealed record Paired(string Transport, string LimitMode, double CallNs, double LimitNs, double Ratio, double ClientBytesPerCall, double ServerBytesPerCall, int Rounds)
    {
        /// <summary>Median per-round ratio of each other signature's burst to the int burst of the same round.</summary>
        public IReadOnlyDictionary<string, double> ToInt { get; init; } = new Dictionary<string, double>();

        /// <summary>The <c>byte</c> burst (1000-byte array) paired the same way with the probe at 1000 B.</summary>
        public (double CallNs, double LimitNs, double Ratio) Bytes { get; init; }

        /// <summary>
        /// The <c>int</c> burst paired with Open MPI's 4 B ping-pong of the same round (<c>peer-mpi</c>), over the
        /// rounds where it ran; <see langword="null"/> on tcp, or when Open MPI is missing or failed.
        /// </summary>
        public (double CallNs, double PeerNs, double Ratio, int Rounds)? Mpi { get; init; }

        /// <summary>Why <see cref="Mpi"/> is missing over shm, else <see langword="null"/>.</summary>
        public string? MpiWhyNot { get; init; }

        /// <summary>
        /// With a busy load (<c>--load N</c>): the <c>int</c> burst while N busy threads run in another process, paired
        /// with the same round's unloaded <c>int</c> burst; <see langword="null"/> without a load.
        /// </summary>
        public (double LoadedNs, double UnloadedNs, double Ratio, string Label)? Loaded { get; init; }
    }

    private static readonly byte[] s_bytes = new byte[1000];

    private static readonly Data s_data = new() { p = 1 };

    /// <summary>The signatures paired with <c>int</c> (each run in its own burst right after it).</summary>
    private static readonly (string Name, Action<ICallCost, int> Call)[] s_others =
    [
        ("virt", static (p, i) => p.TestVirt(i)),
        ("str", static (p, i) => p.TestString("hola")),
        ("data", static (p, i) => p.TestData(s_data)),
    ];

    public static int Run(string transport, int rounds, int load = 0)
    {
        Paired paired = Measure(transport, rounds, (round, limit, call, mpi, loaded) =>
            Console.WriteLine($"round {round}: limit-{Mode(transport)} {limit,8:0.0} ns   {transport} int {call,8:0.0} ns   ratio {call / limit:0.00}x"
                + (mpi is double m ? $"   peer-mpi 4 B {m,8:0.0} ns   ratio {call / m:0.00}x" : "")
                + (loaded is double l ? $"   int under load {l,8:0.0} ns   ratio {l / call:0.00}x" : "")), load: load);
        if (paired.Loaded is { } underLoad)
        {
            Console.WriteLine($"int with {underLoad.Label} (another process): median {underLoad.LoadedNs:0.0} ns vs {underLoad.UnloadedNs:0.0} ns unloaded in the same rounds, median ratio {underLoad.Ratio:0.00}x (budget <= 10x: {(underLoad.Ratio <= 10 ? "met" : "NOT met")})");
        }
        Console.WriteLine($"median: {transport} int {paired.CallNs:0.0} ns, limit-{paired.LimitMode} {paired.LimitNs:0.0} ns, ratio {paired.Ratio:0.00}x over {rounds} rounds; allocated per call: client {paired.ClientBytesPerCall:0.00} B, server {paired.ServerBytesPerCall:0.00} B");
        if (paired.Mpi is { } mpi)
        {
            Console.WriteLine($"int paired with peer-mpi 4 B: median {mpi.CallNs:0.0} ns vs {mpi.PeerNs:0.0} ns, median ratio {mpi.Ratio:0.00}x over {mpi.Rounds} rounds");
        }
        else if (paired.MpiWhyNot is { } why)
        {
            Console.WriteLine($"no peer-mpi pairing: {why}");
        }
        Console.WriteLine($"median per-round ratio to int: {string.Join(", ", paired.ToInt.Select(kv => $"{kv.Key} {kv.Value:0.00}x"))}");
        Console.WriteLine($"byte (1000 B) paired with limit-{paired.LimitMode} at 1000 B: median {paired.Bytes.CallNs:0.0} ns vs {paired.Bytes.LimitNs:0.0} ns, median ratio {paired.Bytes.Ratio:0.00}x");
        return 0;
    }

    /// <summary>
    /// Runs <paramref name="rounds"/> alternating probe and call bursts against a fresh server; over shm with
    /// <paramref name="withMpi"/>, Open MPI's 4 B ping-pong too, right after the limit probe of each round.
    /// </summary>
    public static Paired Measure(string transport, int rounds, Action<int, double, double, double?, double?>? onRound = null, bool withMpi = true, int load = 0)
    {
        string mode = Mode(transport);
        long probeRounds = transport == "shm" ? 50_000 : 5_000;
        int calls = transport == "shm" ? 200_000 : 5_000;
        bool mpi = withMpi && transport == "shm";
        string? mpiWhyNot = null;
        var mpiPairs = new Pairing();
        using RemoteServer server = RemoteServer.Start(transport);
        using RemoteService<ICallCost> remote = Remote.Open<ICallCost>(server.Address, RemoteServer.Options);
        ICallCost proxy = remote.Proxy;
        Burst(proxy, calls); // warm up: tiered JIT in both processes
        Burst(proxy, calls);
        var intPairs = new Pairing();
        var bytePairs = new Pairing();
        var loadPairs = new Pairing();
        string? loadLabel = null;
        var toInt = s_others.ToDictionary(o => o.Name, _ => new List<double>());
        long clientBytes = 0;
        long serverBytes = 0;
        for (int round = 1; round <= rounds; round++)
        {
            IReadOnlyList<LimitProbe.Limit> limits = LimitProbe.Measure(mode, [4, 1000], probeRounds);
            double limit = limits[0].MedianNs;
            // As many MPI round trips as the int burst makes calls, in the same five batches.
            double? mpiNs = mpi ? MpiPingPong.Measure((4, calls / Batches))?[0].MedianNs : null;
            if (mpi && mpiNs is null)
            {
                mpiWhyNot = MpiPingPong.WhyNot;
                mpi = mpiPairs.Count > 0; // a failure in a later round skips that round; none at all stops trying
            }
            // The int burst takes a different place after the probe each round (the first burst after the probe
            // may find the machine in another state than the last), the others keep their order around it.
            int intAt = (round - 1) % (s_others.Length + 1);
            var others = new Dictionary<string, double>();
            double call = 0;
            for (int slot = 0; slot <= s_others.Length; slot++)
            {
                if (slot == intAt)
                {
                    long serverBefore = server.AllocatedBytes();
                    long clientBefore = GC.GetTotalAllocatedBytes(precise: true);
                    call = Burst(proxy, calls);
                    clientBytes += GC.GetTotalAllocatedBytes(precise: true) - clientBefore;
                    serverBytes += server.AllocatedBytes() - serverBefore;
                    continue;
                }
                (string name, Action<ICallCost, int> other) = s_others[slot < intAt ? slot : slot - 1];
                others[name] = Burst(proxy, calls, other);
            }
            bytePairs.Add(Burst(proxy, calls, static (p, i) => p.TestBytes(s_bytes)), limits[1].MedianNs);
            intPairs.Add(call, limit);
            if (mpiNs is double m)
            {
                mpiPairs.Add(call, m);
            }
            foreach ((string name, double ns) in others)
            {
                toInt[name].Add(ns / call);
            }
            double? loadedNs = null;
            if (load > 0)
            {
                // Fewer calls: a call that waits for its peer to be scheduled may cost a time slice.
                using BusyLoad busy = BusyLoad.Start(load);
                loadedNs = Burst(proxy, calls / 10);
                loadLabel = busy.Label;
                loadPairs.Add(loadedNs.Value, call);
            }
            onRound?.Invoke(round, limit, call, mpiNs, loadedNs);
        }
        long total = (long)rounds * (calls / Batches * Batches);
        (double callNs, double limitNs, double ratio) = intPairs.Medians;
        return new Paired(transport, mode, callNs, limitNs, ratio, (double)clientBytes / total, (double)serverBytes / total, rounds)
        {
            ToInt = toInt.ToDictionary(kv => kv.Key, kv => Stats.Median(kv.Value)),
            Bytes = bytePairs.Medians,
            Mpi = mpiPairs.Count > 0 ? (mpiPairs.Medians.CallNs, mpiPairs.Medians.LimitNs, mpiPairs.Medians.Ratio, mpiPairs.Count) : null,
            MpiWhyNot = mpiPairs.Count > 0 ? null : mpiWhyNot,
            Loaded = loadPairs.Count > 0 ? (loadPairs.Medians.CallNs, loadPairs.Medians.LimitNs, loadPairs.Medians.Ratio, loadLabel!) : null,
        };
    }

    /// <summary>A call's burst and the probe's figure, round by round; the medians of each and of their ratios.</summary>
    private sealed class Pairing
    {
        private readonly List<double> _callNs = [];
        private readonly List<double> _limitNs = [];
        private readonly List<double> _ratios = [];

        public (double CallNs, double LimitNs, double Ratio) Medians => (Stats.Median(_callNs), Stats.Median(_limitNs), Stats.Median(_ratios));

        public int Count => _ratios.Count;

        public void Add(double callNs, double limitNs)
        {
            _callNs.Add(callNs);
            _limitNs.Add(limitNs);
            _ratios.Add(callNs / limitNs);
        }
    }

    /// <summary>The probe a transport is judged against: the floor of the same method (both poll).</summary>
    private static string Mode(string transport) => transport == "shm" ? "spin" : "tcp-spin";

    private const int Batches = 5;

    /// <summary>
    /// Awaited <c>Task&lt;int&gt;</c> calls one after another: median of five batches, ns per call; then the same
    /// while one long call (<see cref="ICallCost.Park"/>) stays pending on the connection.
    /// </summary>
    public static int RunAsync(string transport)
    {
        Action<ICallCost, int> call = static (p, i) => p.TestTask(i).GetAwaiter().GetResult();
        PrintBatches(transport, inline: false, 100_000, warmUp: false, "Task<int> awaited", call);
        return PrintBatches(transport, inline: false, 100_000, warmUp: false, "Task<int> awaited, one long call pending", call, parkOne: true);
    }

    /// <summary>
    /// <c>int</c> calls against a server with the default dispatch (<c>DispatchMode.Concurrent</c>): median of five
    /// batches, five times (<c>--dispatch-pair</c> pairs it with inline dispatch).
    /// </summary>
    public static int RunConcurrent(string transport) =>
        PrintBatches(transport, inline: false, transport == "shm" ? 20_000 : 5_000, warmUp: true, "int, concurrent dispatch (the default)", static (p, i) => p.Test(i));

    /// <summary>
    /// The spread of single <c>int</c> calls, back to back against a fresh server: each call timed on its own (the
    /// timer's own cost is in each figure), percentiles over <paramref name="calls"/> calls, three times. Batches and the
    /// median hide what a call that waits for a woken thread or a core costs; the tail shows it.
    /// </summary>
    public static int RunLatency(string transport, int calls, string form = "int")
    {
        using RemoteServer server = RemoteServer.Start(transport);
        using RemoteService<ICallCost> remote = Remote.Open<ICallCost>(server.Address, RemoteServer.Options);
        ICallCost proxy = remote.Proxy;
        var sink = new CallSink();
        Action<int> call = form == "callback" ? i => proxy.TestCallback(sink) : i => proxy.Test(i);
        for (int i = 0; i < (transport == "shm" ? 200_000 : 5_000); i++)
        {
            call(i); // warm up: tiered JIT in both processes
        }
        long[] ticks = new long[calls];
        double ns = 1e9 / System.Diagnostics.Stopwatch.Frequency;
        for (int round = 0; round < 3; round++)
        {
            long previous = System.Diagnostics.Stopwatch.GetTimestamp();
            for (int i = 0; i < calls; i++)
            {
                call(i);
                long now = System.Diagnostics.Stopwatch.GetTimestamp();
                ticks[i] = now - previous;
                previous = now;
            }
            double mean = ticks.Average() * ns;
            Array.Sort(ticks);
            string At(double q) => $"{Stats.AtQuantile(ticks, q) * ns:0}";
            Console.WriteLine($"{transport} {form}, {calls} calls one by one (ns): p50 {At(0.5)}  p90 {At(0.9)}  p99 {At(0.99)}  p99.9 {At(0.999)}  p99.99 {At(0.9999)}  max {ticks[^1] * ns:0}  mean {mean:0}");
        }
        return 0;
    }

    /// <summary>Five rounds of five batches of <paramref name="call"/> against a fresh server, each round printed.</summary>
    private static int PrintBatches(string transport, bool inline, int calls, bool warmUp, string what, Action<ICallCost, int> call, bool parkOne = false)
    {
        using RemoteServer server = RemoteServer.Start(transport, inline);
        using RemoteService<ICallCost> remote = Remote.Open<ICallCost>(server.Address, RemoteServer.Options);
        ICallCost proxy = remote.Proxy;
        using var park = new CancellationTokenSource();
        Task parked = parkOne ? proxy.Park(park.Token) : Task.CompletedTask;
        if (warmUp)
        {
            Burst(proxy, calls, call);
        }
        for (int round = 0; round < 5; round++)
        {
            double[] batches = SortedBatches(proxy, calls, call);
            Console.WriteLine($"{transport} {what}: median {batches[Batches / 2]:0} ns, min {batches[0]:0} ns, max {batches[^1]:0} ns");
        }
        if (parked.IsCompleted != !parkOne)
        {
            throw new InvalidOperationException("The parked call ended before it was cancelled.");
        }
        park.Cancel();
        try
        {
            parked.GetAwaiter().GetResult();
        }
        catch (OperationCanceledException)
        {
            // What cancelling it means.
        }
        return 0;
    }

    /// <summary>Median of five batches, ns per call (the probe reports its median the same way).</summary>
    private static double Burst(ICallCost proxy, int calls) => Burst(proxy, calls, static (p, i) => p.Test(i));

    internal static double Burst(ICallCost proxy, int calls, Action<ICallCost, int> call) => SortedBatches(proxy, calls, call)[Batches / 2];

    /// <summary>ns per call of each of five equal batches of <paramref name="calls"/>, sorted.</summary>
    private static double[] SortedBatches(ICallCost proxy, int calls, Action<ICallCost, int> call)
    {
        var batches = new double[Batches];
        int perBatch = calls / Batches;
        for (int b = 0; b < batches.Length; b++)
        {
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < perBatch; i++)
            {
                call(proxy, i);
            }
            batches[b] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / perBatch;
        }
        Array.Sort(batches);
        return batches;
    }

    /// <summary>The summary rows for calls.json and the table's notes.</summary>
    public static IEnumerable<CallResult> Rows(Paired p)
    {
        yield return new CallResult("int-paired", p.Transport, p.CallNs, null)
        {
            RatioToLimit = p.Ratio,
            Note = string.Create(CultureInfo.InvariantCulture, $"{p.Transport} int paired with limit-{p.LimitMode} in {p.Rounds} alternating bursts: median {p.CallNs:0} ns vs {p.LimitNs:0} ns, median ratio {p.Ratio:0.00}x; allocated per call: client {p.ClientBytesPerCall:0.00} B, server {p.ServerBytesPerCall:0.00} B; each round's bursts as a ratio to its int burst: {string.Join(", ", p.ToInt.Select(kv => string.Create(CultureInfo.InvariantCulture, $"{kv.Key} {kv.Value:0.00}x")))}"),
        };
        yield return new CallResult("byte-paired", p.Transport, p.Bytes.CallNs, null)
        {
            RatioToLimit = p.Bytes.Ratio,
            Note = string.Create(CultureInfo.InvariantCulture, $"{p.Transport} byte (1000 B) paired with limit-{p.LimitMode} at 1000 B in the same rounds: median {p.Bytes.CallNs:0} ns vs {p.Bytes.LimitNs:0} ns, median ratio {p.Bytes.Ratio:0.00}x"),
        };
        if (p.Loaded is { } loaded)
        {
            yield return new CallResult("int-loaded", p.Transport, loaded.LoadedNs, null)
            {
                Note = string.Create(CultureInfo.InvariantCulture, $"{p.Transport} int with {loaded.Label} in another process, paired with the unloaded int burst of the same rounds: median {loaded.LoadedNs:0} ns vs {loaded.UnloadedNs:0} ns, median ratio {loaded.Ratio:0.00}x"),
            };
        }
        if (p.Mpi is { } mpi)
        {
            yield return new CallResult("int-paired-mpi", p.Transport, mpi.CallNs, null)
            {
                RatioToLimit = mpi.Ratio,
                Note = string.Create(CultureInfo.InvariantCulture, $"{p.Transport} int paired with peer-mpi 4 B (Open MPI's ping-pong) in {mpi.Rounds} alternating bursts, the same rounds: median {mpi.CallNs:0} ns vs {mpi.PeerNs:0} ns, median ratio {mpi.Ratio:0.00}x"),
            };
        }
    }
}
