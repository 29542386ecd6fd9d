using System.Diagnostics;
using System.Globalization;

namespace XCall.Bench;

// The callers of the concurrency suite: a client process (one thread, one connection per transport) and the
// threads of this process that share one connection per transport.
internal static partial class ConcurrencySuite
{
    /// <summary>The options of a tcp client: the defaults, but TCP even though the server serves shared memory too.</summary>
    private static readonly RemoteOptions s_tcpClient = new() { PreferSharedMemory = false };

    /// <summary>Opens the service over <paramref name="transport"/> with the client defaults.</summary>
    private static RemoteService<ICallCost> Open(string transport, string shmAddress, string tcpAddress) =>
        transport == "shm" ? Remote.Open<ICallCost>(shmAddress) : Remote.Open<ICallCost>(tcpAddress, s_tcpClient);

    /// <summary>Calls <c>Test(int)</c> until <paramref name="until"/> (a timestamp), timing each call.</summary>
    private static void CallUntil(ICallCost proxy, long until, LatencyHistogram latency)
    {
        double nsPerTick = 1e9 / Stopwatch.Frequency;
        long previous = Stopwatch.GetTimestamp();
        for (int i = 0; previous < until; i++)
        {
            proxy.Test(i);
            long now = Stopwatch.GetTimestamp();
            latency.Record((long)((now - previous) * nsPerTick));
            previous = now;
        }
    }

    /// <summary>
    /// Entry point of a client process: connects over both transports, makes a few calls on each, prints READY, then
    /// answers every <c>RUN shm|tcp MS</c> on its standard input with <c>DONE histogram</c>; exits when it closes.
    /// </summary>
    private static int ClientProcess(string shmAddress, string tcpAddress)
    {
        using RemoteService<ICallCost> shm = Open("shm", shmAddress, tcpAddress);
        using RemoteService<ICallCost> tcp = Open("tcp", shmAddress, tcpAddress);
        for (int i = 0; i < 1000; i++)
        {
            shm.Proxy.Test(i);
            tcp.Proxy.Test(i);
        }
        Console.WriteLine("READY client");
        Console.Out.Flush();
        while (Console.In.ReadLine() is string line)
        {
            string[] parts = line.Split(' ');
            if (parts is not ["RUN", _, _])
            {
                continue;
            }
            var latency = new LatencyHistogram();
            int ms = int.Parse(parts[2], CultureInfo.InvariantCulture);
            CallUntil((parts[1] == "shm" ? shm : tcp).Proxy, Stopwatch.GetTimestamp() + (ms * Stopwatch.Frequency / 1000), latency);
            Console.WriteLine($"DONE {latency.Serialize()}");
            Console.Out.Flush();
        }
        return 0;
    }

    /// <summary>Threads of this process sharing one connection per transport; each run starts them together.</summary>
    private sealed class ThreadCallers : IDisposable
    {
        private readonly int _threads;
        private readonly RemoteService<ICallCost> _shm;
        private readonly RemoteService<ICallCost> _tcp;

        public ThreadCallers(int threads, string shmAddress, string tcpAddress)
        {
            _threads = threads;
            _shm = Open("shm", shmAddress, tcpAddress);
            _tcp = Open("tcp", shmAddress, tcpAddress);
        }

        public RunResult Run(string transport, int ms)
        {
            ICallCost proxy = (transport == "shm" ? _shm : _tcp).Proxy;
            var latencies = new LatencyHistogram[_threads];
            using var ready = new CountdownEvent(_threads);
            using var go = new ManualResetEventSlim();
            long until = 0;
            var threads = new Thread[_threads];
            for (int t = 0; t < _threads; t++)
            {
                int index = t;
                latencies[index] = new LatencyHistogram();
                threads[t] = new Thread(() =>
                {
                    ready.Signal();
                    go.Wait();
                    CallUntil(proxy, Volatile.Read(ref until), latencies[index]);
                })
                { Name = $"caller {t}" };
                threads[t].Start();
            }
            ready.Wait();
            long start = Stopwatch.GetTimestamp();
            Volatile.Write(ref until, start + (ms * Stopwatch.Frequency / 1000));
            go.Set();
            foreach (Thread thread in threads)
            {
                thread.Join();
            }
            double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
            var all = new LatencyHistogram();
            foreach (LatencyHistogram latency in latencies)
            {
                all.Add(latency);
            }
            return new RunResult(all.Count / seconds, all);
        }

        public void Dispose()
        {
            _shm.Dispose();
            _tcp.Dispose();
        }
    }

    /// <summary>Entry point of the server process: an <see cref="XCallServer"/> and <see cref="Remote.Serve"/> with their defaults.</summary>
    public static int ServeDefault(string address)
    {
        using var server = new XCallServer().Add<ICallCost>(new DerivedCallCostService());
        using RemoteListener listener = Remote.Serve(address, server);
        Console.WriteLine($"READY {listener.TcpAddress}");
        Console.Out.Flush();
        while (Console.In.ReadLine() is not null)
        {
        }
        return 0;
    }
}
