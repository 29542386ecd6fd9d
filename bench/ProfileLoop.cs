using System.Diagnostics;
using System.Globalization;

namespace XCall.Bench;

/// <summary>
/// <c>--loop shm|tcp int|callback|oneway|pipelined|pipelined-valuetask|threads SECONDS</c>: one form of call in a loop against a
/// server process with the default settings (the throughput rows' options), for a profiler to attach to. It prints both pids first (for
/// <c>perf record -p</c>), then the rate it reached. Forms: <c>int</c> a sync <c>void Test(int)</c>; <c>callback</c> a sync
/// <c>int TestCallback(ICallSink)</c> whose server calls the sink back; <c>oneway</c>
/// 1,000 one-way calls then a sync call; <c>pipelined</c> 1,000 <c>Task&lt;int&gt;</c> calls then awaiting them all;
/// <c>pipelined-valuetask</c> the same with <c>ValueTask&lt;int&gt;</c>; <c>threads</c> 16 threads making sync
/// <c>int</c> calls on the one connection (the concurrency suite's shape). The last line also gives the bytes the process
/// allocated per call (all threads).
/// </summary>
internal static class ProfileLoop
{
    private const int Batch = 1000;
    private const int Threads = 16;

    public static async Task<int> Run(string transport, string form, double seconds)
    {
        if (form is not ("int" or "callback" or "oneway" or "pipelined" or "pipelined-valuetask" or "threads"))
        {
            Console.Error.WriteLine($"--loop: unknown form '{form}' (int, callback, oneway, pipelined, pipelined-valuetask or threads)");
            return 2;
        }
        RemoteServer server = RemoteServer.Shared(transport);
        try
        {
            using RemoteService<ICallCost> cost = Remote.Open<ICallCost>(server.Address, RemoteServer.Options);
            using RemoteService<IThroughput> throughput = Remote.Open<IThroughput>(server.Address, RemoteServer.Options);
            Console.WriteLine($"client pid {Environment.ProcessId}, server pid {server.Process.Id}");
            Console.Out.Flush();
            var sink = new CallSink();
            var tasks = new Task<int>[Batch];
            var valueTasks = new ValueTask<int>[Batch];
            ShmCounters? counters = transport == "shm" && form is "int" or "callback" or "threads" ? ShmCounters.Of(cost.Connection) : null;
            long allocated = GC.GetTotalAllocatedBytes(precise: true);
            var clock = Stopwatch.StartNew();
            long calls = 0;
            if (form == "threads")
            {
                calls = RunThreads(cost.Proxy, clock, seconds);
            }
            while (form != "threads" && clock.Elapsed.TotalSeconds < seconds)
            {
                switch (form)
                {
                    case "int":
                        for (int i = 0; i < Batch; i++)
                        {
                            cost.Proxy.Test(i);
                        }
                        break;
                    case "callback":
                        for (int i = 0; i < Batch; i++)
                        {
                            cost.Proxy.TestCallback(sink);
                        }
                        break;
                    case "oneway":
                        for (int i = 0; i < Batch; i++)
                        {
                            throughput.Proxy.TestOneWay(i);
                        }
                        throughput.Proxy.OneWayCount();
                        break;
                    case "pipelined-valuetask":
                        for (int i = 0; i < Batch; i++)
                        {
                            valueTasks[i] = throughput.Proxy.TestValueAsync(i);
                        }
                        for (int i = 0; i < Batch; i++)
                        {
                            await valueTasks[i].ConfigureAwait(false);
                        }
                        break;
                    default:
                        for (int i = 0; i < Batch; i++)
                        {
                            tasks[i] = throughput.Proxy.TestAsync(i);
                        }
                        foreach (Task<int> task in tasks)
                        {
                            await task.ConfigureAwait(false);
                        }
                        break;
                }
                calls += Batch;
            }
            double ns = clock.Elapsed.TotalNanoseconds / calls;
            double bytes = (double)(GC.GetTotalAllocatedBytes(precise: true) - allocated) / calls;
            string drains = throughput.Connection is { } connection && form.StartsWith("pipelined", StringComparison.Ordinal)
                ? string.Create(CultureInfo.InvariantCulture, $", {connection.Completions.Completed * 100.0 / calls:0}% completed by drainers in {connection.Completions.Runs:N0} runs")
                : "";
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{form} over {transport}: {calls:N0} calls, {ns:0.0} ns per call, {1e3 / ns:0.00} M calls/s, {bytes:0.0} B allocated per call{drains}"));
            if (counters is not null)
            {
                Console.WriteLine(counters.PerThousand(calls));
            }
        }
        finally
        {
            RemoteServer.StopShared();
        }
        return 0;
    }

    private static long RunThreads(ICallCost proxy, Stopwatch clock, double seconds)
    {
        long calls = 0;
        var threads = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            threads[t] = new Thread(() =>
            {
                long mine = 0;
                while (clock.Elapsed.TotalSeconds < seconds)
                {
                    for (int i = 0; i < 100; i++)
                    {
                        proxy.Test(i);
                    }
                    mine += 100;
                }
                Interlocked.Add(ref calls, mine);
            });
            threads[t].Start();
        }
        foreach (Thread thread in threads)
        {
            thread.Join();
        }
        return calls;
    }
}

/// <summary>
/// The client's counters of its shm connection (how its receiving changed hands) over the loop: taken at the start,
/// printed per 1,000 calls at the end. Diagnostics: the connection's channel is found through its reconnecting
/// wrapper's private field, so a renamed field prints "n/a" instead of failing the loop.
/// </summary>
internal sealed class ShmCounters
{
    private readonly XCall.Transport.Shm.ShmChannel? _shm;
    private readonly long[] _start;

    private ShmCounters(XCall.Transport.Shm.ShmChannel? shm)
    {
        _shm = shm;
        _start = Read();
    }

    public static ShmCounters Of(XCall.Runtime.XCallConnection? connection)
    {
        object? channel = connection?.Channel;
        object? inner = channel?.GetType().GetField("_inner", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance)?.GetValue(channel);
        return new ShmCounters((inner ?? channel) as XCall.Transport.Shm.ShmChannel);
    }

    public string PerThousand(long calls)
    {
        if (_shm is null)
        {
            return "per 1,000 calls on the int/callback connection: n/a (not an shm channel, or its wrapper changed)";
        }
        long[] now = Read();
        double Per(int i) => (now[i] - _start[i]) * 1e3 / calls;
        return string.Create(CultureInfo.InvariantCulture, $"per 1,000 calls on the int/callback connection: caller sleeps on the ring {Per(0):0.0}, receive thread wake-ups {Per(1):0.0}, role waits {Per(2):0.0}, hand-over asks {Per(3):0.0}, releases left marked {Per(4):0.0}");
    }

    private long[] Read() => _shm is null ? new long[5] : [_shm.LeaderSleeps, _shm.ReceiveThreadWakeSeq, _shm.RoleWaits, _shm.HandOverAsks, _shm.ReleasesLeftMarked];
}
