using System.Diagnostics;
using System.Globalization;
using XCall;
using XCall.Transport;
using XCall.Transport.Shm;
using XCall.Transport.Shm.TestHost;

// Child process for the shared-memory transport's cross-process tests, and a quick latency probe.
//   server NAME [--dir D] [--strategy S] [--allow UID,..] [--ring N] [--heartbeat MS]    echo server; prints READY, ACCEPTED, CLOSED ...
//   client NAME COUNT [options]                                         COUNT checked echo round trips; prints OK / REFUSED / ERROR
//   hold NAME [options]                                                 connects, one round trip, prints CONNECTED, waits for stdin EOF
//   pingpong STRATEGY ITERATIONS [BYTES] [SERVER-STRATEGY]              round-trip time against a server child, one JSON line
//   killlatency RUNS                                                    kill -9 of the server mid-call to failure of the call
string mode = args.Length > 0 ? args[0] : "";
try
{
    return mode switch
    {
        "server" => Server(args[1], ParseOptions(args, 2)),
        "client" => Client(args[1], int.Parse(args[2], CultureInfo.InvariantCulture), ParseOptions(args, 3)),
        "hold" => Hold(args[1], ParseOptions(args, 2)),
        "pingpong" => PingPong(
            Enum.Parse<ShmIdleStrategy>(args[1]),
            int.Parse(args[2], CultureInfo.InvariantCulture),
            args.Length > 3 ? int.Parse(args[3], CultureInfo.InvariantCulture) : 4,
            args.Length > 4 ? Enum.Parse<ShmIdleStrategy>(args[4]) : Enum.Parse<ShmIdleStrategy>(args[1])),
        "killlatency" => KillLatency(int.Parse(args[1], CultureInfo.InvariantCulture)),
        _ => Usage(),
    };
}
catch (ShmPeerRefusedException ex)
{
    Console.WriteLine($"REFUSED {ex.Message}");
    return 3;
}
catch (XCallException ex)
{
    Console.WriteLine($"ERROR {ex.GetType().Name}: {ex.Message}");
    return 2;
}

static int Usage()
{
    Console.Error.WriteLine("usage: server|client|hold|pingpong|killlatency ...");
    return 1;
}

static ShmOptions ParseOptions(string[] args, int start)
{
    var options = new ShmOptions();
    for (int i = start; i + 1 < args.Length; i += 2)
    {
        options = args[i] switch
        {
            "--dir" => options with { RuntimeDirectory = args[i + 1] },
            "--strategy" => options with { IdleStrategy = Enum.Parse<ShmIdleStrategy>(args[i + 1]) },
            "--allow" => options with { AllowedUids = args[i + 1].Split(',').Select(s => uint.Parse(s, CultureInfo.InvariantCulture)).ToArray() },
            "--ring" => options with { RingSize = int.Parse(args[i + 1], CultureInfo.InvariantCulture) },
            "--heartbeat" => options with { HeartbeatTimeout = TimeSpan.FromMilliseconds(int.Parse(args[i + 1], CultureInfo.InvariantCulture)) },
            _ => throw new ArgumentException($"unknown option {args[i]}"),
        };
    }
    return options;
}

static int Server(string name, ShmOptions options)
{
    using ShmListener listener = ShmTransport.Listen(name, options);
    var accepting = new Thread(() =>
    {
        try
        {
            while (true)
            {
                FrameChannel channel = listener.Accept();
                var handler = new EchoHandler(channel, Console.WriteLine);
                channel.Start(handler);
                Console.WriteLine("ACCEPTED");
            }
        }
        catch (ObjectDisposedException)
        {
        }
    })
    { IsBackground = true };
    accepting.Start();
    Console.WriteLine($"READY {Environment.ProcessId}");
    while (Console.In.ReadLine() is not null)
    {
    }
    return 0;
}

static int Client(string name, int count, ShmOptions options)
{
    using FrameChannel channel = ShmTransport.Connect(name, options);
    using var client = new EchoClient(channel);
    var random = new Random(42);
    byte[] payload = new byte[4096];
    byte[] reply = new byte[4096];
    for (int i = 0; i < count; i++)
    {
        int length = random.Next(1, payload.Length);
        random.NextBytes(payload.AsSpan(0, length));
        client.RoundTrip(payload.AsSpan(0, length), reply.AsSpan(0, length));
        if (!payload.AsSpan(0, length).SequenceEqual(reply.AsSpan(0, length)))
        {
            Console.WriteLine($"ERROR reply {i} differs");
            return 2;
        }
    }
    Console.WriteLine($"OK {count}");
    return 0;
}

static int Hold(string name, ShmOptions options)
{
    using FrameChannel channel = ShmTransport.Connect(name, options);
    using var client = new EchoClient(channel);
    client.RoundTrip([1, 2, 3]);
    Console.WriteLine($"CONNECTED {Environment.ProcessId}");
    while (Console.In.ReadLine() is not null)
    {
    }
    return 0;
}

static int PingPong(ShmIdleStrategy strategy, int iterations, int bytes, ShmIdleStrategy serverStrategy)
{
    string name = $"pingpong-{Environment.ProcessId}";
    using Process server = StartSelf($"server {name} --strategy {serverStrategy}");
    WaitForLine(server, "READY");
    var options = new ShmOptions { IdleStrategy = strategy };
    using FrameChannel channel = ShmTransport.Connect(name, options);
    using var client = new EchoClient(channel, new ConnectionOptions { DispatchMode = DispatchMode.Inline });
    byte[] payload = new byte[bytes];
    byte[] reply = new byte[bytes];
    // Warm up for 2 s: tiered compilation and dynamic PGO must have finished on both sides, or the first
    // batches measure tier-0 code.
    long warmUp = Stopwatch.GetTimestamp();
    while (Stopwatch.GetElapsedTime(warmUp).TotalSeconds < 2)
    {
        for (int i = 0; i < 1000; i++)
        {
            client.RoundTrip(payload, reply);
        }
    }
    long allocated = GC.GetTotalAllocatedBytes(precise: true);
    double[] batches = new double[5];
    for (int b = 0; b < batches.Length; b++)
    {
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < iterations; i++)
        {
            client.RoundTrip(payload, reply);
        }
        batches[b] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / iterations;
    }
    double allocatedPerCall = (GC.GetTotalAllocatedBytes(precise: true) - allocated) / (5.0 * iterations);
    Array.Sort(batches);
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"{{\"probe\":\"xcall-shm-{strategy.ToString().ToLowerInvariant()}{(serverStrategy == strategy ? "" : "-server-" + serverStrategy.ToString().ToLowerInvariant())}\",\"bytes\":{bytes},\"iters\":{iterations},\"rtt_ns_median\":{batches[2]:0},\"rtt_ns_min\":{batches[0]:0},\"rtt_ns_max\":{batches[4]:0},\"client_alloc_bytes_per_call\":{allocatedPerCall:0.###}}}"));
    server.StandardInput.Close();
    server.WaitForExit();
    return 0;
}

static int KillLatency(int runs)
{
    var results = new List<double>();
    for (int run = 0; run < runs; run++)
    {
        string name = $"kill-{Environment.ProcessId}-{run}";
        using Process server = StartSelf($"server {name}");
        WaitForLine(server, "READY");
        using FrameChannel channel = ShmTransport.Connect(name);
        using var client = new EchoClient(channel);
        client.RoundTrip([1]);
        long killedAt = 0;
        var call = Task.Run(() =>
        {
            try
            {
                client.RoundTrip([1], EchoHandler.HangMethod);
                return -1.0;
            }
            catch (XCallDisconnectedException)
            {
                return Stopwatch.GetElapsedTime(Volatile.Read(ref killedAt)).TotalMilliseconds;
            }
        });
        WaitForLine(server, "IN CALL");
        Volatile.Write(ref killedAt, Stopwatch.GetTimestamp());
        server.Kill();
        results.Add(call.GetAwaiter().GetResult());
    }
    results.Sort();
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"{{\"probe\":\"xcall-shm-kill9-to-failure\",\"runs\":{runs},\"ms_median\":{results[results.Count / 2]:0.000},\"ms_min\":{results[0]:0.000},\"ms_max\":{results[^1]:0.000}}}"));
    return 0;
}

static Process StartSelf(string arguments)
{
    var info = new ProcessStartInfo("dotnet", $"\"{typeof(EchoHandler).Assembly.Location}\" {arguments}")
    {
        RedirectStandardInput = true,
        RedirectStandardOutput = true,
        UseShellExecute = false,
    };
    return Process.Start(info)!;
}

static void WaitForLine(Process process, string prefix)
{
    while (process.StandardOutput.ReadLine() is { } line)
    {
        if (line.StartsWith(prefix, StringComparison.Ordinal))
        {
            return;
        }
    }
    throw new InvalidOperationException($"The child process ended before printing {prefix}.");
}
