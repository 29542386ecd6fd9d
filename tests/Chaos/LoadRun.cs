using System.Diagnostics;
using System.Globalization;

namespace XCall.Chaos;

/// <summary>
/// `load CALLERS CALLS`: per transport, a ledger server and four caller processes sharing CALLERS threads, each
/// making CALLS checked calls (the caller knows every answer). Prints calls per second and the latency
/// percentiles (p50 / p99 / p99.9, from quarter-octave buckets) per transport; passes when no answer is wrong and
/// no call failed.
/// </summary>
public static class LoadRun
{
    public static int Run(int callers, long calls)
    {
        bool pass = true;
        foreach (string transport in new[] { "shm", "tcp" })
        {
            string name = $"load-{Environment.ProcessId}-{transport}";
            string ledger = Path.Combine(Path.GetTempPath(), name + ".ledger");
            using var server = new Child("serve", name, ledger);
            string port = server.WaitLine("READY", TimeSpan.FromSeconds(60))?.Split(' ')[1] ?? throw new InvalidOperationException("the server did not start");
            string address = transport == "shm" ? $"shm://{name}" : $"tcp://127.0.0.1:{port}/{name}";
            const int Processes = 4;
            var clients = Enumerable.Range(0, Processes)
                .Select(p => new Child("load", address, transport, (callers / Processes + (p < callers % Processes ? 1 : 0)).ToString(CultureInfo.InvariantCulture), calls.ToString(CultureInfo.InvariantCulture)))
                .ToList();
            long wrong = 0, errors = 0;
            double seconds = 0;
            long[] histogram = new long[Caller.Buckets];
            foreach (Child client in clients)
            {
                string? load = client.WaitLine("LOAD", TimeSpan.FromHours(4));
                string? hist = client.WaitLine("HIST", TimeSpan.FromMinutes(1));
                if (load is null || hist is null)
                {
                    Console.WriteLine($"load {transport}: a caller process ended without its results");
                    pass = false;
                    continue;
                }
                string[] parts = load.Split(' ');
                wrong += long.Parse(parts[1], CultureInfo.InvariantCulture);
                errors += long.Parse(parts[2], CultureInfo.InvariantCulture);
                seconds = Math.Max(seconds, double.Parse(parts[3], CultureInfo.InvariantCulture));
                long[] counts = [.. hist.Split(' ').Skip(1).Select(s => long.Parse(s, CultureInfo.InvariantCulture))];
                for (int i = 0; i < counts.Length; i++)
                {
                    histogram[i] += counts[i];
                }
            }
            clients.ForEach(c => c.Dispose());
            File.Delete(ledger);
            long total = histogram.Sum();
            bool ok = wrong == 0 && errors == 0 && total == (long)callers * calls;
            pass &= ok;
            Console.WriteLine(FormattableString.Invariant(
                $"load {transport}: {callers} callers x {calls:N0} checked calls, {total / seconds:N0} calls/s, p50 {Percentile(histogram, 0.5)}, p99 {Percentile(histogram, 0.99)}, p99.9 {Percentile(histogram, 0.999)}, max {Percentile(histogram, 1.0)}; {wrong} wrong, {errors} failed: {(ok ? "PASS" : "FAIL")}"));
        }
        return pass ? 0 : 1;
    }

    /// <summary>The upper bound of the bucket holding the <paramref name="p"/> quantile, as text.</summary>
    private static string Percentile(long[] histogram, double p)
    {
        long total = histogram.Sum();
        long rank = Math.Max(1, (long)Math.Ceiling(p * total));
        long seen = 0;
        for (int i = 0; i < histogram.Length; i++)
        {
            seen += histogram[i];
            if (seen >= rank)
            {
                double ns = Caller.BucketTop(i);
                return ns >= 1e6 ? FormattableString.Invariant($"{ns / 1e6:0.00} ms") : FormattableString.Invariant($"{ns / 1e3:0.0} µs");
            }
        }
        return "-";
    }
}

/// <summary>
/// `soak MINUTES`: a ledger server and two callers (shm, tcp) that connect, make 100 checked calls and
/// disconnect, again and again; the server's resident memory, descriptors and threads are sampled from /proc
/// thirty times. Passes when no answer was wrong, no call failed, and the last quarter of the samples stays
/// within bounds of the first quarter (memory +25 % + 32 MiB, descriptors +8, threads +8).
/// </summary>
public static class SoakRun
{
    public static int Run(double minutes)
    {
        string name = $"soak-{Environment.ProcessId}";
        string ledger = Path.Combine(Path.GetTempPath(), name + ".ledger");
        using var server = new Child("serve", name, ledger);
        string port = server.WaitLine("READY", TimeSpan.FromSeconds(60))?.Split(' ')[1] ?? throw new InvalidOperationException("the server did not start");
        string seconds = (minutes * 60).ToString(CultureInfo.InvariantCulture);
        var clients = new List<Child>
        {
            new("cycle", $"shm://{name}", "shm", seconds),
            new("cycle", $"tcp://127.0.0.1:{port}/{name}", "tcp", seconds),
        };
        var samples = new List<(double Minutes, long RssKb, int Fds, int Threads)>();
        var clock = Stopwatch.StartNew();
        TimeSpan every = TimeSpan.FromMinutes(minutes / 30);
        for (int s = 0; s <= 30; s++)
        {
            TimeSpan due = every * s;
            if (due > clock.Elapsed)
            {
                Thread.Sleep(due - clock.Elapsed);
            }
            samples.Add(Sample(server.Id, clock.Elapsed.TotalMinutes));
        }
        long connections = 0, wrong = 0, errors = 0;
        foreach (Child client in clients)
        {
            string[] parts = client.WaitLine("CYCLE", TimeSpan.FromMinutes(2))?.Split(' ') ?? ["CYCLE", "0", "0", "1"];
            connections += long.Parse(parts[1], CultureInfo.InvariantCulture);
            wrong += long.Parse(parts[2], CultureInfo.InvariantCulture);
            errors += long.Parse(parts[3], CultureInfo.InvariantCulture);
            client.Dispose();
        }
        File.Delete(ledger);
        foreach ((double m, long rss, int fds, int threads) in samples)
        {
            Console.WriteLine(FormattableString.Invariant($"  {m,6:0.00} min  rss {rss / 1024.0,8:0.0} MiB  fds {fds,4}  threads {threads,4}"));
        }
        int quarter = samples.Count / 4;
        var first = samples.Skip(1).Take(quarter).ToList(); // sample 0 is before the first connection
        var last = samples.TakeLast(quarter).ToList();
        bool flat = last.Max(x => x.RssKb) <= first.Max(x => x.RssKb) * 1.25 + 32 * 1024
            && last.Max(x => x.Fds) <= first.Max(x => x.Fds) + 8
            && last.Max(x => x.Threads) <= first.Max(x => x.Threads) + 8;
        bool pass = flat && wrong == 0 && errors == 0 && connections > 0;
        Console.WriteLine(FormattableString.Invariant(
            $"soak: {minutes} min, {connections:N0} connections of 100 checked calls, {wrong} wrong, {errors} failed; rss {first.Max(x => x.RssKb) / 1024.0:0} -> {last.Max(x => x.RssKb) / 1024.0:0} MiB, fds {first.Max(x => x.Fds)} -> {last.Max(x => x.Fds)}, threads {first.Max(x => x.Threads)} -> {last.Max(x => x.Threads)}: {(pass ? "PASS" : "FAIL")}"));
        return pass ? 0 : 1;
    }

    private static (double, long, int, int) Sample(int pid, double minutes)
    {
        string[] status = File.ReadAllLines($"/proc/{pid}/status");
        long Field(string key) => long.Parse(status.First(l => l.StartsWith(key, StringComparison.Ordinal)).Split(':')[1].Trim().Split(' ')[0], CultureInfo.InvariantCulture);
        return (minutes, Field("VmRSS"), Directory.GetFiles($"/proc/{pid}/fd").Length, (int)Field("Threads"));
    }
}
