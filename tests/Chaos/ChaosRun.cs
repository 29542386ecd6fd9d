using System.Diagnostics;
using XCall.Transport.Shm;

namespace XCall.Chaos;

/// <summary>
/// `chaos ITERATIONS [SEED]`: each iteration starts a ledger server and four appending callers (two over shm,
/// two over tcp), then at a random moment of their calls kills the server (kill -9), kills one caller (kill
/// -9), or pauses the server (SIGSTOP for up to 300 ms, SIGCONT) and then kills it. Checks: no caller or
/// server hangs (30 s bound), every acknowledged append is in the ledger file, nothing is left in /dev/shm,
/// a server ended by SIGTERM leaves no socket file and the stale socket of a killed one goes with the next
/// server of the name, the callers that survive a caller's death go on being served. Prints the detection
/// time of each death (kill to the peer's failure) per transport and side, and one summary line.
/// </summary>
public static class ChaosRun
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    public static int Run(int iterations, int seed)
    {
        var random = new Random(seed);
        string dir = Path.Combine(Path.GetTempPath(), $"xcall-chaos-{Environment.ProcessId}");
        Directory.CreateDirectory(dir);
        var detection = new Dictionary<string, List<double>>();
        int hangs = 0, lost = 0, acknowledged = 0, leftovers = 0, staleSockets = 0, serverKills = 0, callerKills = 0, pauses = 0, unserved = 0;
        var failures = new List<string>();
        var clock = Stopwatch.StartNew();
        for (int i = 0; i < iterations; i++)
        {
            string name = $"chaos-{Environment.ProcessId}-{i}";
            string ledgerPath = Path.Combine(dir, $"ledger-{i}");
            using var server = new Child("serve", name, ledgerPath);
            string? ready = server.WaitLine("READY", Bound);
            if (ready is null)
            {
                failures.Add($"iteration {i}: the server did not start");
                hangs++;
                continue;
            }
            string tcpAddress = $"tcp://127.0.0.1:{ready.Split(' ')[1]}/{name}";
            var callers = new List<CallerState>();
            for (int c = 0; c < 4; c++)
            {
                string transport = c % 2 == 0 ? "shm" : "tcp";
                callers.Add(new CallerState(transport, new Child("append", transport == "shm" ? $"shm://{name}" : tcpAddress, transport, (i * 4 + c + 1).ToString(System.Globalization.CultureInfo.InvariantCulture))));
            }
            try
            {
                foreach (CallerState caller in callers)
                {
                    if (!caller.WaitAck(Bound))
                    {
                        failures.Add($"iteration {i}: a {caller.Transport} caller made no call");
                        hangs++;
                    }
                }
                Thread.Sleep(random.Next(0, 100)); // a random moment of the calls

                int action = random.Next(3);
                if (action == 1)
                {
                    callerKills++;
                    CallerState victim = callers[random.Next(callers.Count)];
                    long killed = Stopwatch.GetTimestamp();
                    victim.Child.Kill();
                    victim.Child.WaitForExit(Bound);
                    victim.Drain(Bound);
                    string? closed = server.WaitLine($"CLOSED {victim.Transport}", Bound);
                    if (closed is null)
                    {
                        failures.Add($"iteration {i}: the server did not notice a killed {victim.Transport} caller");
                        hangs++;
                    }
                    else
                    {
                        Add(detection, $"server notices a dead {victim.Transport} caller", Milliseconds(killed, long.Parse(closed.Split(' ')[2], System.Globalization.CultureInfo.InvariantCulture)));
                    }
                    foreach (CallerState survivor in callers.Where(c => c != victim))
                    {
                        if (!survivor.WaitAck(Bound))
                        {
                            failures.Add($"iteration {i}: a surviving {survivor.Transport} caller was not served");
                            unserved++;
                        }
                    }
                    server.Terminate();
                    if (!server.WaitForExit(Bound))
                    {
                        failures.Add($"iteration {i}: the server did not end on SIGTERM");
                        hangs++;
                    }
                    if (File.Exists(ShmOptions.Default.RuntimeDirectory + $"/{name}.sock"))
                    {
                        failures.Add($"iteration {i}: a server ended by SIGTERM left its socket file");
                        leftovers++;
                    }
                }
                else
                {
                    if (action == 2)
                    {
                        pauses++;
                        server.Stop();
                        Thread.Sleep(random.Next(10, 300));
                        server.Continue();
                        foreach (CallerState caller in callers)
                        {
                            if (!caller.WaitAck(Bound))
                            {
                                failures.Add($"iteration {i}: a {caller.Transport} caller was not served after SIGCONT");
                                hangs++;
                            }
                        }
                    }
                    serverKills++;
                    long killed = Stopwatch.GetTimestamp();
                    server.Kill();
                    foreach (CallerState caller in callers)
                    {
                        if (!caller.Drain(Bound) || caller.Down is not { } down)
                        {
                            failures.Add($"iteration {i}: a {caller.Transport} caller did not see the server die");
                            hangs++;
                            continue;
                        }
                        Add(detection, $"caller notices a dead server over {caller.Transport}", Milliseconds(killed, down));
                    }
                    server.WaitForExit(Bound);
                    if (File.Exists(ShmOptions.Default.RuntimeDirectory + $"/{name}.sock"))
                    {
                        staleSockets++;
                        ShmTransport.Listen(name).Dispose(); // the next server of the name removes a stale socket
                        if (File.Exists(ShmOptions.Default.RuntimeDirectory + $"/{name}.sock"))
                        {
                            failures.Add($"iteration {i}: the stale socket of a killed server stayed");
                            leftovers++;
                        }
                    }
                }
                foreach (CallerState caller in callers)
                {
                    caller.Child.Terminate();
                    caller.Drain(Bound);
                }

                var ledger = File.ReadAllLines(ledgerPath).Select(l => long.Parse(l, System.Globalization.CultureInfo.InvariantCulture)).ToHashSet();
                foreach (CallerState caller in callers)
                {
                    acknowledged += caller.Acked.Count;
                    int missing = caller.Acked.Count(id => !ledger.Contains(id));
                    if (missing > 0)
                    {
                        failures.Add($"iteration {i}: {missing} acknowledged appends of a {caller.Transport} caller are not in the ledger");
                        lost += missing;
                    }
                }
                int shmFiles = Directory.GetFiles("/dev/shm").Count(f => f.Contains(name, StringComparison.Ordinal));
                if (shmFiles > 0)
                {
                    failures.Add($"iteration {i}: {shmFiles} file(s) of {name} left in /dev/shm");
                    leftovers += shmFiles;
                }
            }
            finally
            {
                callers.ForEach(c => c.Child.Dispose());
            }
            if ((i + 1) % 50 == 0)
            {
                Console.WriteLine($"chaos: {i + 1} iterations, {clock.Elapsed.TotalSeconds:0} s");
            }
        }
        Directory.Delete(dir, recursive: true);

        foreach (string failure in failures.Take(20))
        {
            Console.WriteLine("  " + failure);
        }
        foreach ((string what, List<double> ms) in detection.OrderBy(d => d.Key))
        {
            ms.Sort();
            Console.WriteLine(System.FormattableString.Invariant(
                $"detection, {what}: n={ms.Count} p50 {Percentile(ms, 0.50):0.0} ms, p99 {Percentile(ms, 0.99):0.0} ms, max {ms[^1]:0.0} ms"));
        }
        bool pass = hangs == 0 && lost == 0 && leftovers == 0 && unserved == 0 && failures.Count == 0;
        Console.WriteLine($"chaos: {iterations} iterations ({serverKills} server kill -9, {callerKills} caller kill -9, {pauses} SIGSTOP/SIGCONT), " +
            $"{hangs} hangs, {lost} lost of {acknowledged} acknowledged effects, {leftovers} leftovers, {unserved} survivors unserved, " +
            $"{staleSockets} stale sockets removed by the next server: {(pass ? "PASS" : "FAIL")}");
        return pass ? 0 : 1;
    }

    private static void Add(Dictionary<string, List<double>> detection, string what, double ms)
    {
        if (!detection.TryGetValue(what, out List<double>? list))
        {
            detection[what] = list = [];
        }
        list.Add(ms);
    }

    private static double Milliseconds(long from, long to) => (to - from) * 1000.0 / Stopwatch.Frequency;

    public static double Percentile(List<double> sorted, double p) => sorted[Math.Min(sorted.Count - 1, (int)Math.Ceiling(p * sorted.Count) - 1)];

    /// <summary>One appending caller process and what it printed.</summary>
    private sealed class CallerState(string transport, Child child)
    {
        public string Transport { get; } = transport;

        public Child Child { get; } = child;

        public HashSet<long> Acked { get; } = [];

        public long? Down { get; private set; }

        /// <summary>Waits for the caller's next acknowledged call.</summary>
        public bool WaitAck(TimeSpan timeout)
        {
            string? line = Child.WaitLine("ACK ", timeout, Consume);
            if (line is null)
            {
                return false;
            }
            Consume(line);
            return true;
        }

        public bool Drain(TimeSpan timeout) => Child.Drain(timeout, Consume);

        private void Consume(string line)
        {
            string[] parts = line.Split(' ');
            if (parts[0] == "ACK")
            {
                Acked.Add(long.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture));
            }
            else if (parts[0] == "DOWN")
            {
                Down = long.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture);
            }
        }
    }
}
