using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using XCall.Channels;
using XCall.Channels.Distributed;
using XCall.Cluster;

namespace XCall.Bench;

/// <summary>
/// Named channels between two processes (XCall.Channels.Distributed), over shared memory (one node) and over TCP
/// (the two ranks told they are on different nodes, on loopback), each against an XCall <c>void Test(int)</c> call
/// to the same peer in alternating bursts of the same run: a rendezvous write to a reader in the other process, a
/// value there and back (a write to the peer's channel, whose process writes it back to ours), and ints through a
/// buffered named channel. Rows are labelled with the defaults they use (sync writes, default dispatch).
/// </summary>
internal static partial class ChannelSuite
{
    private const int NetOps = 5_000;

    /// <summary>Ints per buffered burst: fifty times the buffer, so the burst measures the reader's pace, not the buffer filling.</summary>
    private const int NetBufferedOps = 200_000;

    /// <summary>The value that ends a buffered burst: the peer answers it on the pong channel once it read it, so every value was taken.</summary>
    private const int BufferedMark = -2;
    private const int NetRounds = 15;

    /// <summary>The operations at the start of a burst that <c>XCALL_BENCH_NET_ALTERNATE</c> times apart (a form settling after another).</summary>
    private const int SwitchOps = 250;

    /// <summary>The least time of warm-up bursts before the timed rounds.</summary>
    private static readonly TimeSpan NetWarmUp = TimeSpan.FromSeconds(3);

    private enum NetForm
    {
        /// <summary>XCall <c>void Test(int)</c> on the peer.</summary>
        Call,

        /// <summary>The same call on a connection opened with <c>Remote.Open</c> and default options instead of the world's.</summary>
        CallPlain,

        /// <summary>The world's call, made from a thread of its own instead of the pool thread the suite runs on.</summary>
        CallThread,

        /// <summary>The world's call, made from a new thread-pool work item instead of the suite's own pool thread.</summary>
        CallPoolItem,

        /// <summary>A sync write on a named unbuffered One2One the peer reads.</summary>
        Write,

        /// <summary>A write to the peer's One2One and the read of the value it writes back to ours.</summary>
        RoundTrip,

        /// <summary>As <see cref="Write"/>, the peer's reader an async loop instead of a thread (diagnostic).</summary>
        WriteAsyncReader,

        /// <summary>As <see cref="RoundTrip"/>, the peer's reader an async loop instead of a thread (diagnostic).</summary>
        RoundTripAsyncReader,

        /// <summary>Sync writes on a named One2One with a 4096-slot buffer the peer drains; the burst ends when the peer read them all.</summary>
        Buffered,

        /// <summary>The world's call while a thread of this process writes to the peer's <see cref="Write"/> reader on the
        /// same connection all along: the peer's reader reads that connection between its values (diagnostic).</summary>
        CallBesideWrites,
    }

    private static void RunNet(SuiteLog log, List<CallResult> results)
    {
        foreach (string transport in new[] { "shm", "tcp" })
        {
            RunNetPair(transport, log, results);
        }
    }

    private static void RunNetPair(string transport, SuiteLog log, List<CallResult> results)
    {
        string job = $"bnet{Environment.ProcessId}{transport}";
        Dictionary<string, string> variables = NetVariables(transport, job);
        var start = new ProcessStartInfo("dotnet") { UseShellExecute = false };
        start.ArgumentList.Add(Self);
        foreach (string a in new[] { "--suite", "channels", "--child", "net-peer", transport })
        {
            start.ArgumentList.Add(a);
        }
        foreach ((string name, string value) in variables)
        {
            start.Environment[name] = value;
        }
        start.Environment[WorldEnvironment.RankVariable] = "1";
        if (transport == "tcp")
        {
            start.Environment[WorldEnvironment.NodeVariable] = "bench-b";
        }
        using Process peer = Process.Start(start)!;
        try
        {
            var environment = WorldEnvironment.Detect(variables, Environment.MachineName, Environment.ProcessId);
            NetMeasure(transport, environment, peer.Id, log, results).GetAwaiter().GetResult();
        }
        finally
        {
            if (!peer.WaitForExit(30_000))
            {
                peer.Kill(entireProcessTree: true);
            }
        }
    }

    /// <summary>
    /// The options both ranks connect with: over tcp without <see cref="RemoteOptions.PreferSharedMemory"/>, which
    /// would otherwise take a tcp address on this machine whose server also listens on shm for shm.
    /// </summary>
    private static RemoteOptions NetRemote(string transport) =>
        transport == "tcp" ? new RemoteOptions { PreferSharedMemory = false } : RemoteOptions.Default;

    private static Dictionary<string, string> NetVariables(string transport, string job)
    {
        var variables = new Dictionary<string, string>
        {
            [WorldEnvironment.RankVariable] = "0",
            [WorldEnvironment.SizeVariable] = "2",
            [WorldEnvironment.JobIdVariable] = job,
        };
        if (transport == "tcp")
        {
            // Two "nodes" on loopback: the ranks reach each other over TCP, the store by its address.
            using var probe = new TcpListener(IPAddress.Loopback, 0);
            probe.Start();
            int port = ((IPEndPoint)probe.LocalEndpoint).Port;
            probe.Stop();
            variables[WorldEnvironment.NodeVariable] = "bench-a";
            variables[WorldEnvironment.HostVariable] = "127.0.0.1";
            variables[WorldEnvironment.StoreVariable] = $"tcp://127.0.0.1:{port}/xcall-store-{job}";
        }
        return variables;
    }

    private static async Task NetMeasure(string transport, WorldEnvironment environment, int peerPid, SuiteLog log, List<CallResult> results)
    {
        await using CspWorld csp = await CspWorld.JoinAsync(new ClusterOptions { Environment = environment, Remote = NetRemote(transport) });
        ClusterWorld world = csp.World!;
        One2One<int> pong = await csp.CreateOne2OneAsync<int>("bench-pong");
        ICallCost call = await world.OpenAsync<ICallCost>(1);
        IChannelOut<int> write = await csp.OpenOutAsync<int>("bench-write");
        IChannelOut<int> ping = await csp.OpenOutAsync<int>("bench-ping");
        IChannelOut<int> buffered = await csp.OpenOutAsync<int>("bench-buffered");
        IChannelOut<int> writeAsync = await csp.OpenOutAsync<int>("bench-write-a");
        IChannelOut<int> pingAsync = await csp.OpenOutAsync<int>("bench-ping-a");
        using RemoteService<ICallCost> plain = await Remote.OpenAsync<ICallCost>(world.GetAddress(1), NetRemote(transport));
        NetForm[] forms = [NetForm.Call, NetForm.CallPlain, NetForm.CallThread, NetForm.CallPoolItem, NetForm.Write, NetForm.RoundTrip, NetForm.WriteAsyncReader, NetForm.RoundTripAsyncReader, NetForm.Buffered, NetForm.CallBesideWrites];
        double switchNs = 0; // the time of a burst's first SwitchOps operations (Alternate)
        if (Environment.GetEnvironmentVariable("XCALL_BENCH_NET_PROFILE") is { } only)
        {
            // For a profiler attached to both processes (docs/benchmarks.md): one form for 12 s before the rows.
            NetForm f = Enum.Parse<NetForm>(only);
            long until = Environment.TickCount64 + 12_000;
            var bursts = new List<double>();
            while (Environment.TickCount64 < until)
            {
                bursts.Add(Burst(f, Ops(f)));
            }
            bursts.Sort();
            log.Line($"Profile form {f} over {transport}: {bursts.Count} bursts of {Ops(f):N0}, ns per operation min {bursts[0]:0.0}, median {bursts[bursts.Count / 2]:0.0}, max {bursts[^1]:0.0}");
        }
        if (Environment.GetEnvironmentVariable("XCALL_BENCH_NET_ALTERNATE") is { } alternate)
        {
            Alternate(alternate.Split(',').Select(Enum.Parse<NetForm>).ToArray());
        }
        // A diagnostic of switching between forms: bursts of the given forms alternated for 12 s before the rows, the first
        // SwitchOps operations of each burst timed apart from the rest (how long a form takes to settle after another).
        void Alternate(NetForm[] alternated)
        {
            long until = Environment.TickCount64 + 12_000;
            var first = alternated.ToDictionary(f => f, _ => new List<double>());
            var rest = alternated.ToDictionary(f => f, _ => new List<double>());
            while (Environment.TickCount64 < until)
            {
                foreach (NetForm f in alternated)
                {
                    double whole = Burst(f, Ops(f));
                    first[f].Add(switchNs / SwitchOps);
                    rest[f].Add(((whole * Ops(f)) - switchNs) / (Ops(f) - SwitchOps));
                }
            }
            foreach (NetForm f in alternated)
            {
                log.Line($"Alternated form {f} over {transport}: {first[f].Count} bursts of {Ops(f):N0}; ns per operation, first {SwitchOps}: {Spread(first[f])}; the rest: {Spread(rest[f])}");
            }
            static string Spread(List<double> list)
            {
                double[] values = [.. list];
                Array.Sort(values);
                string At(double q) => Stats.AtQuantile(values, q).ToString("0", CultureInfo.InvariantCulture);
                return $"p10 {At(0.10)}, p50 {At(0.50)}, p90 {At(0.90)}, mean {values.Average():0}";
            }
        }
        double Burst(NetForm form, int ops)
        {
            if (form == NetForm.CallThread)
            {
                double threadNs = 0;
                var thread = new Thread(() => threadNs = Burst(NetForm.Call, ops));
                thread.Start();
                thread.Join();
                return threadNs;
            }
            if (form == NetForm.CallPoolItem)
            {
                return Task.Run(() => Burst(NetForm.Call, ops)).GetAwaiter().GetResult();
            }
            if (form == NetForm.CallBesideWrites)
            {
                int writing = 1;
                var writer = new Thread(() =>
                {
                    for (int v = 0; Volatile.Read(ref writing) != 0; v = (v + 1) & 0xFFFF)
                    {
                        write.Write(v);
                    }
                })
                { IsBackground = true };
                writer.Start();
                try
                {
                    return Burst(NetForm.Call, ops);
                }
                finally
                {
                    Volatile.Write(ref writing, 0);
                    writer.Join();
                }
            }
            long begin = Stopwatch.GetTimestamp();
            for (int i = 0; i < ops; i++)
            {
                if (i == SwitchOps)
                {
                    switchNs = Stopwatch.GetElapsedTime(begin).TotalNanoseconds;
                }
                switch (form)
                {
                    case NetForm.Call:
                        call.Test(i);
                        break;
                    case NetForm.CallPlain:
                        plain.Proxy.Test(i);
                        break;
                    case NetForm.Write or NetForm.WriteAsyncReader:
                        (form == NetForm.Write ? write : writeAsync).Write(i);
                        break;
                    case NetForm.RoundTrip or NetForm.RoundTripAsyncReader:
                        (form == NetForm.RoundTrip ? ping : pingAsync).Write(i);
                        pong.In.Read();
                        break;
                    default:
                        buffered.Write(i);
                        break;
                }
            }
            if (form == NetForm.Buffered)
            {
                buffered.Write(BufferedMark);
                pong.In.Read();
            }
            return Stopwatch.GetElapsedTime(begin).TotalNanoseconds / ops;
        }
        static int Ops(NetForm form) => form == NetForm.Buffered ? NetBufferedOps : NetOps;
        // Warm-up: alternated bursts of every form for at least NetWarmUp, so the rows time the tier-1 code of both
        // processes (each step of the tiered JIT comes about 100 ms after the last new call at the tier below, and the
        // compiler thread shares two cores with spinning ones). The first bursts are printed as a diagnostic.
        var cold = forms.ToDictionary(f => f, f => Burst(f, Ops(f) / 10));
        long warmStart = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(warmStart) < NetWarmUp)
        {
            foreach (NetForm form in forms)
            {
                Burst(form, Ops(form) / 10);
            }
        }
        var ns = forms.ToDictionary(f => f, _ => new List<double>());
        for (int round = 0; round < NetRounds; round++)
        {
            // Every other round runs the forms backwards, so the int call does not always follow the buffered burst,
            // which leaves both processes busy for a while after its last value is read.
            for (int k = 0; k < forms.Length; k++)
            {
                NetForm form = forms[round % 2 == 0 ? k : forms.Length - 1 - k];
                ns[form].Add(Burst(form, Ops(form)));
            }
        }
        var switches = new List<string>();
        foreach (NetForm form in new[] { NetForm.Call, NetForm.Write, NetForm.RoundTrip, NetForm.WriteAsyncReader, NetForm.Buffered })
        {
            // Buffered: switches per batch (CreditWriter.BatchSize values), CPU time still per value.
            int per = form == NetForm.Buffered ? CreditWriter<int>.BatchSize : 1;
            switches.Add($"{form}{(per > 1 ? $" (switches per {per} values)" : "")}: {SwitchesPerOp([Environment.ProcessId, peerPid], Ops(form), () => Burst(form, Ops(form)), per)}");
        }
        // Each operation timed on its own, in a diagnostic burst after the rounds (the rows time whole bursts): whether a
        // row's mean is its typical operation or a tail.
        var spreads = new List<string>();
        foreach (NetForm form in new[] { NetForm.Call, NetForm.Write, NetForm.RoundTrip })
        {
            spreads.Add($"{form}: {OperationSpread(Ops(form), () => Burst(form, 1))}");
        }
        write.Write(-1); // the peer's readers end on -1
        ping.Write(-1);
        writeAsync.Write(-1);
        pingAsync.Write(-1);
        buffered.Write(-1);

        double baseline = Median(ns[NetForm.Call]);
        log.Line();
        log.Line($"Named channels between two processes over {transport}, against an XCall void Test(int) call to the same peer; {NetOps:N0} operations ({NetBufferedOps:N0} ints for the buffered row, ended by a value the reader answers), median of {NetRounds} alternating rounds after {NetWarmUp.TotalSeconds:0} s of warm-up (defaults: sync writes, concurrent dispatch)");
        log.Line("| operation | ns per operation | x XCall int call | per second |");
        log.Line("|---|---:|---:|---:|");
        foreach ((NetForm form, string name, string signature) in new[]
        {
            (NetForm.Call, $"XCall void Test(int) over {transport}", $"net-int-call-{transport}"),
            (NetForm.CallPlain, $"XCall void Test(int) over {transport}, a Remote.Open connection with default options{(transport == "tcp" ? " but PreferSharedMemory=false" : "")} (diagnostic)", $"net-int-call-plain-{transport}"),
            (NetForm.CallThread, $"XCall void Test(int) over {transport}, called from a thread of its own (diagnostic)", $"net-int-call-thread-{transport}"),
            (NetForm.CallPoolItem, $"XCall void Test(int) over {transport}, called from a new thread-pool work item (diagnostic)", $"net-int-call-poolitem-{transport}"),
            (NetForm.Write, "named One2One<int>: rendezvous write, reader in the other process", $"net-write-{transport}"),
            (NetForm.RoundTrip, "named One2One<int>: a value there and back", $"net-roundtrip-{transport}"),
            (NetForm.WriteAsyncReader, "named One2One<int>: rendezvous write, the reader an async loop (diagnostic)", $"net-write-async-reader-{transport}"),
            (NetForm.RoundTripAsyncReader, "named One2One<int>: there and back, the peer's reader an async loop (diagnostic)", $"net-roundtrip-async-reader-{transport}"),
            (NetForm.Buffered, "named One2One<int>, buffer of 4096: sync writes, reader draining", $"net-buffered-{transport}"),
            (NetForm.CallBesideWrites, $"XCall void Test(int) over {transport} while another thread writes to the peer's reader on the same connection (diagnostic)", $"net-int-call-beside-writes-{transport}"),
        })
        {
            double value = Median(ns[form]);
            log.Line($"| {name} | {value:0.0} | {Format(value / baseline, "0.00")} | {Format(1e9 / value, "N0")} |");
            results.Add(new CallResult(signature, transport, value, null) { RatioToLocal = value / baseline });
        }
        log.Line($"Context switches and CPU time per operation over {transport} (voluntary+involuntary switches, ns on a CPU; threads with 0.05 switches or 20 ns; a diagnostic burst after the rounds): {string.Join("; ", switches)}");
        log.Line($"Operations timed one by one over {transport} (ns; a diagnostic burst after the rounds): {string.Join("; ", spreads)}");
        log.Line($"Rounds over {transport} (ns per operation, in round order; odd rounds ran the forms backwards): {string.Join("; ", forms.Select(f => $"{f} {string.Join(" / ", ns[f].Select(v => v.ToString("0", CultureInfo.InvariantCulture)))}"))}");
        log.Line($"First bursts over {transport}, before the warm-up (ns per operation, a tenth of a row's burst; the JIT's first tier in both processes): {string.Join("; ", forms.Select(f => $"{f} {cold[f]:0.0}"))}");
        if (transport == "shm")
        {
            log.Budget("named One2One rendezvous write over shm / XCall shm int call", Median(ns[NetForm.Write]) / baseline, 1.2, $"{Median(ns[NetForm.Write]):0.0} vs {baseline:0.0} ns");
            log.Budget("named One2One value there and back over shm / XCall shm int call", Median(ns[NetForm.RoundTrip]) / baseline, 2.4, $"{Median(ns[NetForm.RoundTrip]):0.0} vs {baseline:0.0} ns");
            double perSecond = 1e9 / Median(ns[NetForm.Buffered]);
            log.Budget("buffered named channel over shm, million ints per second (inverted: 10 / rate)", 10 / (perSecond / 1e6), 1.0, $"{perSecond / 1e6:0.00} M ints/s, budget >= 10 M");
        }
    }

    /// <summary>The peer (rank 1): hosts the channels the parent writes to, reads them, and answers pings on the parent's channel.</summary>
    private static int NetPeer(string transport)
    {
        return NetPeerAsync(transport).GetAwaiter().GetResult();

        static async Task<int> NetPeerAsync(string transport)
        {
            var services = new XCallServer().Add<ICallCost>(new CallCostService());
            await using CspWorld csp = await CspWorld.JoinAsync(new ClusterOptions { Services = services, Remote = NetRemote(transport) });
            One2One<int> write = await csp.CreateOne2OneAsync<int>("bench-write");
            One2One<int> ping = await csp.CreateOne2OneAsync<int>("bench-ping");
            One2One<int> buffered = await csp.CreateOne2OneAsync("bench-buffered", new FifoBuffer<int>(4096));
            One2One<int> writeAsync = await csp.CreateOne2OneAsync<int>("bench-write-a");
            One2One<int> pingAsync = await csp.CreateOne2OneAsync<int>("bench-ping-a");
            IChannelOut<int> pong = await csp.OpenOutAsync<int>("bench-pong");
            // Async readers: a value written by a remote call resumes them on the thread that ran the write.
            Task[] asyncReaders =
            [
                DrainAsync(writeAsync.In, null),
                DrainAsync(pingAsync.In, pong),
            ];
            static async Task DrainAsync(ChannelIn<int> input, IChannelOut<int>? answer)
            {
                int value;
                while ((value = await input.ReadAsync()) != -1)
                {
                    if (answer is not null)
                    {
                        await answer.WriteAsync(value);
                    }
                }
            }
            static void Drain(ChannelIn<int> input, Action<int>? answer)
            {
                int value;
                while ((value = input.Read()) != -1)
                {
                    answer?.Invoke(value);
                }
            }
            void Answer(int value)
            {
                if (value == BufferedMark)
                {
                    pong.Write(value);
                }
            }
            Thread[] readers =
            [
                new(() => Drain(write.In, null)),
                new(() => Drain(ping.In, value => pong.Write(value))),
                new(() => Drain(buffered.In, Answer)),
            ];
            foreach (Thread reader in readers)
            {
                reader.Start();
            }
            foreach (Thread reader in readers)
            {
                reader.Join();
            }
            await Task.WhenAll(asyncReaders);
            return 0;
        }
    }

    /// <summary><paramref name="ops"/> operations, each timed by <paramref name="timed"/> (ns): percentiles, mean, and how many took over 1 ms.</summary>
    private static string OperationSpread(int ops, Func<double> timed)
    {
        var each = new double[ops];
        for (int i = 0; i < ops; i++)
        {
            each[i] = timed();
        }
        double mean = each.Average();
        Array.Sort(each);
        string At(double q) => Stats.AtQuantile(each, q).ToString("0", System.Globalization.CultureInfo.InvariantCulture);
        return $"p10 {At(0.10)}, p50 {At(0.50)}, p90 {At(0.90)}, p99 {At(0.99)}, mean {mean:0}, over 1 ms {each.Count(x => x > 1e6)} of {ops}";
    }
}
