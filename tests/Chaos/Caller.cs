using System.Diagnostics;

namespace XCall.Chaos;

/// <summary>
/// `append ADDRESS TRANSPORT TAG`: appends ids TAG*2^32 + 1, 2, ... one after another and prints "ACK ID" for
/// each call that returned; when the connection is lost, prints "DOWN TIMESTAMP" (Stopwatch ticks) and ends.
/// `load ADDRESS TRANSPORT THREADS CALLS`: THREADS threads make CALLS checked calls each and print
/// "LOAD WRONG ERRORS SECONDS" and a latency histogram line "HIST c0 c1 ..." (bucket i: [2^(i/4), 2^((i+1)/4)) ns).
/// `cycle ADDRESS TRANSPORT SECONDS`: connects, makes 100 checked calls, disconnects, again until SECONDS pass;
/// prints "CYCLE CONNECTIONS WRONG ERRORS".
/// </summary>
public static class Caller
{
    public const int Buckets = 160;

    public static RemoteService<ILedger> Open(string address, string transport) =>
        Remote.Open<ILedger>(address, new RemoteOptions { Reconnect = false, PreferSharedMemory = transport == "shm" });

    public static int Append(string address, string transport, long tag)
    {
        using RemoteService<ILedger> ledger = Open(address, transport);
        for (long i = 1; ; i++)
        {
            long id = (tag << 32) + i;
            try
            {
                if (ledger.Proxy.Append(id) != id)
                {
                    Output.Line($"WRONG {id}");
                    return 1;
                }
            }
            catch (XCallException ex) when (ex is XCallDisconnectedException || ex.InnerException is XCallDisconnectedException)
            {
                Output.Line($"DOWN {Stopwatch.GetTimestamp()}");
                return 0;
            }
            Output.Line($"ACK {id}");
        }
    }

    public static int Load(string address, string transport, int threads, long calls)
    {
        using RemoteService<ILedger> ledger = Open(address, transport);
        long wrong = 0, errors = 0;
        long[] histogram = new long[Buckets];
        var clock = Stopwatch.StartNew();
        var workers = Enumerable.Range(0, threads).Select(t => new Thread(() =>
        {
            long[] local = new long[Buckets];
            var random = new Random(t);
            for (long i = 0; i < calls; i++)
            {
                long a = random.NextInt64(), b = random.NextInt64();
                long start = Stopwatch.GetTimestamp();
                try
                {
                    if (ledger.Proxy.Mix(a, b) != Ledger.Expected(a, b))
                    {
                        Interlocked.Increment(ref wrong);
                    }
                }
                catch (XCallException)
                {
                    Interlocked.Increment(ref errors);
                }
                local[Bucket(Stopwatch.GetElapsedTime(start).Ticks * 100)]++;
            }
            lock (histogram)
            {
                for (int i = 0; i < Buckets; i++)
                {
                    histogram[i] += local[i];
                }
            }
        })).ToList();
        workers.ForEach(w => w.Start());
        workers.ForEach(w => w.Join());
        Output.Line($"LOAD {wrong} {errors} {clock.Elapsed.TotalSeconds:0.000}");
        Output.Line("HIST " + string.Join(' ', histogram));
        return 0;
    }

    public static int Cycle(string address, string transport, double seconds)
    {
        long connections = 0, wrong = 0, errors = 0;
        var random = new Random();
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            try
            {
                using RemoteService<ILedger> ledger = Open(address, transport);
                connections++;
                for (int i = 0; i < 100; i++)
                {
                    long a = random.NextInt64(), b = random.NextInt64();
                    if (ledger.Proxy.Mix(a, b) != Ledger.Expected(a, b))
                    {
                        wrong++;
                    }
                }
            }
            catch (XCallException)
            {
                errors++;
            }
        }
        Output.Line($"CYCLE {connections} {wrong} {errors}");
        return 0;
    }

    /// <summary>Quarter-octave bucket of a duration in nanoseconds.</summary>
    public static int Bucket(long nanoseconds) => Math.Min(Buckets - 1, (int)(4 * Math.Log2(Math.Max(1, nanoseconds))));

    /// <summary>The upper bound, in nanoseconds, of bucket <paramref name="i"/>.</summary>
    public static double BucketTop(int i) => Math.Pow(2, (i + 1) / 4.0);
}
