using System.Runtime.InteropServices;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Filters;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using Perfolizer.Horology;
using XCall.Bench;
using XCall.Bench.Peers;

if (args.Length > 0 && args[0] == "--probe-child")
{
    return LimitProbe.Child(args);
}

if (args.Length > 1 && args[0] == "--suite" && args[1] == "channels")
{
    return ChannelSuite.Run(args[2..]);
}

if (args.Length > 1 && args[0] == "--suite" && args[1] == "parallel")
{
    return ParallelSuite.Run(args[2..]);
}

if (args.Length > 1 && args[0] == "--suite" && args[1] == "mpi")
{
    return MpiSuite.Run(args[2..]);
}

if (args.Length > 1 && args[0] == "--suite" && args[1] == "concurrency")
{
    return ConcurrencySuite.Run(args[2..]);
}

if (args.Length > 1 && args[0] == "--serve-default")
{
    return ConcurrencySuite.ServeDefault(args[1]);
}

if (args.Length > 1 && args[0] == "--busy")
{
    return BusyLoad.Serve(int.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture));
}

if (XCall.Bench.Peers.PeerServers.Run(args) is int peerExit)
{
    return peerExit;
}

if (args.Length > 1 && args[0] == "--serve")
{
    return RemoteServer.Serve(args[1], args.Contains("--inline"), args.Contains("--no-options"));
}

if (args.Length > 1 && args[0] == "--async-probe")
{
    return SideBySide.RunAsync(args[1]);
}

if (args.Length > 1 && args[0] == "--concurrent-probe")
{
    return SideBySide.RunConcurrent(args[1]);
}

if (args.Length > 1 && args[0] == "--dispatch-pair")
{
    return DispatchPair.Run(
        args[1],
        args.Length > 2 ? int.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture) : 7,
        args.Length > 3 ? int.Parse(args[3], System.Globalization.CultureInfo.InvariantCulture) : 0);
}

if (args.Length > 3 && args[0] == "--loop")
{
    return await ProfileLoop.Run(args[1], args[2], double.Parse(args[3], System.Globalization.CultureInfo.InvariantCulture));
}

if (args.Length > 0 && args[0] == "--peer-pair")
{
    return PeerPair.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "--peer-loop")
{
    return PeerPair.Loop(args[1..]);
}

if (args.Length > 0 && args[0] == "--stream")
{
    return StreamProbe.Run(args[1..]);
}

if (args.Length > 1 && args[0] == "--latency")
{
    return SideBySide.RunLatency(args[1], args.Length > 2 ? int.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture) : 2_000_000, args.Length > 3 ? args[3] : "int");
}

if (args.Length > 1 && args[0] == "--side-by-side")
{
    int loadAt = Array.IndexOf(args, "--load");
    int load = loadAt > 0 && loadAt + 1 < args.Length ? int.Parse(args[loadAt + 1], System.Globalization.CultureInfo.InvariantCulture) : 0;
    return SideBySide.Run(args[1], args.Length > 2 && loadAt != 2 ? int.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture) : 7, load);
}

if (args.Length > 0 && args[0] == "--limits")
{
    // Only the machine-limit probes, every implementation side by side, and Open MPI's ping-pong (to check them
    // against ../shared/anchors).
    bool managedToo = args.Contains("--managed");
    foreach ((string mode, long rounds) in new[] { ("spin", 100_000L), ("tcp", 5_000L), ("tcp-spin", 20_000L) })
    {
        foreach (LimitProbe.Limit l in LimitProbe.Measure(mode, [4, 1000], rounds, forceManaged: false).Concat(managedToo ? LimitProbe.Measure(mode, [4, 1000], rounds, forceManaged: true) : []))
        {
            Console.WriteLine($"{"limit-" + l.Mode,-14} {l.Bytes,7} B  best {l.BestNs,9:0.0} ns  median {l.MedianNs,9:0.0} ns  ({l.Implementation})");
        }
    }
    if (MpiPingPong.Measure(MpiPingPong.RowSizes) is { } mpiRows)
    {
        foreach (MpiPingPong.Result m in mpiRows)
        {
            Console.WriteLine($"{"peer-mpi",-14} {m.Bytes,7} B  best {m.BestNs,9:0.0} ns  median {m.MedianNs,9:0.0} ns  (Open MPI ping-pong, round trip)");
        }
    }
    else
    {
        Console.WriteLine($"peer-mpi: not measured: {MpiPingPong.WhyNot}");
    }
    return 0;
}

BenchOptions options;
try
{
    options = BenchOptions.Parse(args);
}
catch (HelpRequestedException)
{
    Console.WriteLine(BenchOptions.Usage);
    return 0;
}
catch (ArgumentException ex)
{
    Console.Error.WriteLine(ex.Message);
    Console.Error.WriteLine(BenchOptions.Usage);
    return 2;
}
BenchOptions.Current = options;

// In-process: the proxies come from a source generator, which BenchmarkDotNet's out-of-process
// rebuild of this project would not run reliably; the measured code is the same.
Job job = (options.Full
        ? Job.Default
        : Job.Default.WithWarmupCount(2).WithIterationCount(7).WithIterationTime(TimeInterval.FromMilliseconds(100)))
    .WithToolchain(InProcessEmitToolchain.Instance);
// The serializer comparison gets longer warm-up and more iterations even in the quick run: System.Text.Json
// and MessagePack need their tiered JIT to settle, or on a busy machine their figures swing several-fold.
Job graphJob = (options.Full
        ? Job.Default
        : Job.Default.WithWarmupCount(6).WithIterationCount(15).WithIterationTime(TimeInterval.FromMilliseconds(200)))
    .WithToolchain(InProcessEmitToolchain.Instance);
IConfig Config(Job j) => ManualConfig.CreateMinimumViable()
    .AddJob(j)
    .AddDiagnoser(BenchmarkDotNet.Diagnosers.MemoryDiagnoser.Default)
    .AddFilter(new SimpleFilter(c => options.Includes(c.Descriptor.WorkloadMethodDisplayInfo.Trim('\''))
        || (c.Descriptor.Type == typeof(GraphSerializerBenchmarks) && options.Includes(GraphSerializerBenchmarks.Signature))))
    .AddEventProcessor(new ProgressLine())
    .WithOptions(ConfigOptions.DisableLogFile | ConfigOptions.JoinSummary);
IConfig config = Config(job);

var results = new List<CallResult>();
PeerBenchmarks.Selected = [.. options.Peers.Where(PeerBenchmarks.AllPeers.Contains)];
var suiteList = new List<Type> { typeof(LocalCallBenchmark), typeof(TelemetryCheckBenchmark), typeof(CallCostBenchmarks) };
if (options.Transports.Any(t => t is "shm" or "tcp"))
{
    suiteList.Add(typeof(ThroughputBenchmarks));
}
if (PeerBenchmarks.Selected.Length > 0)
{
    suiteList.Add(typeof(PeerBenchmarks));
}
bool withMpi = options.Peers.Contains("mpi") && options.Transports.Contains("shm");
Type[] suites = [.. suiteList];
Summary[] summaries = [.. BenchmarkRunner.Run(suites, config), BenchmarkRunner.Run(typeof(GraphSerializerBenchmarks), Config(graphJob))];
RemoteServer.StopShared();
foreach (BenchmarkReport report in summaries.SelectMany(s => s.Reports))
{
    if (report.ResultStatistics is null)
    {
        continue;
    }
    string signature = report.BenchmarkCase.Descriptor.WorkloadMethodDisplayInfo.Trim('\'');
    string transport = report.BenchmarkCase.Parameters.Items.FirstOrDefault(p => p.Name is "Transport" or "Peer")?.Value as string ?? "direct";
    if (report.BenchmarkCase.Descriptor.Type == typeof(GraphSerializerBenchmarks))
    {
        (transport, signature) = (signature, GraphSerializerBenchmarks.Signature);
    }
    results.Add(new CallResult(signature, transport, report.ResultStatistics.Mean, report.GcStats.GetBytesAllocatedPerOperation(report.BenchmarkCase)));
}

// The machine's limits, measured now, in the same run (ratio_to_limit of the shm and tcp rows: shm against
// limit-spin, tcp against limit-tcp-spin, which polls as XCall's tcp transport does; limit-tcp, which blocks
// in read, stays as a row).
foreach ((string transport, string mode, long rounds) in new[] { ("shm", "spin", 100_000L), ("tcp", "tcp", 5_000L), ("tcp", "tcp-spin", 20_000L) })
{
    if (!options.Transports.Contains(transport))
    {
        continue;
    }
    Console.WriteLine($"// measuring limit-{mode} (two processes, 4 B and 1000 B)...");
    foreach (LimitProbe.Limit limit in LimitProbe.Measure(mode, [4, 1000], rounds))
    {
        results.Add(new CallResult(limit.Bytes == 4 ? "int" : "byte", $"limit-{mode}", limit.MedianNs, null) { Note = $"{limit.Implementation} probe, best {limit.BestNs:0} ns" });
    }
}

// Open MPI's ping-pong in the same run (peer-mpi): 4 B beside int, 1000 B beside byte, and 1 MiB beside
// lent[1MiB] as half the round trip (1 MiB moved one way, as one call moves it).
if (withMpi)
{
    Console.WriteLine("// measuring peer-mpi (Open MPI ping-pong between two ranks: 4 B, 1000 B, 1 MiB)...");
    if (MpiPingPong.Measure(MpiPingPong.RowSizes) is { } mpiRows)
    {
        foreach (MpiPingPong.Result m in mpiRows)
        {
            string note = $"Open MPI ping-pong, best {m.BestNs:0} ns per round trip";
            results.Add(m.Bytes == 1 << 20
                ? new CallResult("lent[1MiB]", "peer-mpi", m.MedianNs / 2, null) { Note = $"{note}, {m.MedianNs / 1000:0.0} µs median" }
                : new CallResult(m.Bytes == 4 ? "int" : "byte", "peer-mpi", m.MedianNs, null) { Note = note });
        }
    }
    else
    {
        Console.WriteLine($"// peer-mpi: not measured: {MpiPingPong.WhyNot}");
    }
}

// The floors of a 1 MiB one-way transfer next to the span[1MiB] row: two copies through shared memory (what a
// ring does), and one copy across the processes (process_vm_readv, what Open MPI does). C probe only.
if (options.Transports.Contains("shm") && options.Includes("span[1MiB]"))
{
    Console.WriteLine("// measuring the 1 MiB copy floors (two processes, copy through shared memory, process_vm_readv)...");
    foreach (string mode in new[] { "copy", "cma" })
    {
        if (LimitProbe.MeasureBulk(mode, 1 << 20, 200) is { } floor)
        {
            results.Add(new CallResult("span[1MiB]", $"limit-{mode}", floor.MedianNs, null));
        }
    }
}

// The int call paired with the limit probe in alternating bursts (the same load for both), the byte call
// with the probe at 1000 B in the same rounds, and the bytes both processes allocate per call.
foreach (string transport in new[] { "shm", "tcp" }.Where(options.Transports.Contains))
{
    Console.WriteLine($"// pairing {transport} int with its limit probe (7 alternating bursts)...");
    results.AddRange(SideBySide.Rows(SideBySide.Measure(transport, 7, withMpi: withMpi)));
}

// An idle shm connection: CPU used by both processes once idle for 50 ms (adaptive idle strategy).
if (options.Transports.Contains("shm"))
{
    Console.WriteLine("// measuring an idle shm connection (2 s)...");
    double percent = IdleConnection.CpuPercent("shm");
    results.Add(new CallResult("idle", "shm", percent, null) { Note = "% of one core used by client + server, idle for 2 s after 50 ms" });
}

IReadOnlyList<CallResult> final = ResultWriter.WithRatios(results);
string machine = Machine.Describe();
Console.WriteLine();
Console.WriteLine(ResultWriter.Table(final, machine));
string outDir = options.OutDirectory ?? Path.Combine(Path.GetTempPath(), "xcall-bench-" + DateTime.UtcNow.ToString("yyyyMMdd-HHmmss"));
ResultWriter.WriteFiles(outDir, final, machine);
Console.WriteLine($"Results written to {Path.GetFullPath(outDir)} (calls.json, calls.md, calls.csv, calls.png)");
return final.Count > 0 ? 0 : 1;

internal static class Machine
{
    public static string Describe()
    {
        string cpu = "unknown CPU";
        try
        {
            cpu = File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal))?.Split(':', 2)[1].Trim() ?? cpu;
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
        return $"{cpu}, {Environment.ProcessorCount} cores, {RuntimeInformation.OSDescription}, {RuntimeInformation.FrameworkDescription}";
    }
}
