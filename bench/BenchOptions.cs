using Peers_ = XCall.Bench.Peers;

namespace XCall.Bench;

/// <summary>Command-line options of the call-cost benchmark.</summary>
internal sealed record BenchOptions
{
    public static readonly string[] AllTransports = ["direct", "domain", "shm", "tcp"];
    public static readonly string[] AllSignatures = ["loc", "int", "virt", "data", "data-new", "record", "str", "byte", "int[1M]", "struct", "ref/out", "Task<int>", "oneway", "callback", "graph100"];

    public string[] Transports { get; init; } = AllTransports;
    public string[] Filter { get; init; } = [];
    /// <summary>The peers <c>--peers</c> knows: the BenchmarkDotNet rows of PeerBenchmarks, and <c>mpi</c> (Open MPI's ping-pong, the peer-mpi rows).</summary>
    public static readonly string[] AllPeers = [.. Peers_.PeerBenchmarks.AllPeers, "mpi"];

    public string[] Peers { get; init; } = AllPeers;
    public string? OutDirectory { get; init; }
    public bool Full { get; init; }

    /// <summary>The options of the current run (the in-process BenchmarkDotNet toolchain reads them).</summary>
    public static BenchOptions Current { get; set; } = new();

    public static BenchOptions Parse(string[] args)
    {
        var options = new BenchOptions();
        for (int i = 0; i < args.Length; i++)
        {
            string Next() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{args[i]} needs a value.");
            options = args[i] switch
            {
                "--full" => options with { Full = true },
                "--out" => options with { OutDirectory = Next() },
                "--transports" => options with { Transports = Split(Next(), AllTransports, "transport") },
                "--peers" => options with { Peers = Next() is "none" ? [] : Split(args[i], AllPeers, "peer") },
                "--filter" => options with { Filter = Next().Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries) },
                "-h" or "--help" => throw new HelpRequestedException(),
                _ => throw new ArgumentException($"Unknown option {args[i]}."),
            };
        }
        return options;
    }

    public bool Includes(string signature) =>
        Filter.Length == 0 || Filter.Any(f => signature.Contains(f, StringComparison.OrdinalIgnoreCase));

    /// <summary>A comma-separated list, every item one of <paramref name="allowed"/>.</summary>
    internal static string[] Split(string value, string[] allowed, string what)
    {
        string[] items = value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        foreach (string item in items)
        {
            if (!allowed.Contains(item))
            {
                throw new ArgumentException($"Unknown {what} '{item}' (known: {string.Join(", ", allowed)}).");
            }
        }
        return items;
    }

    public const string Usage = """
        XCall call-cost benchmark: ns per call, signature by signature, on each transport.

        usage: dotnet run -c Release --project bench -- [options]
          --transports LIST   comma-separated: direct,domain,shm,tcp (default: all)
          --filter LIST       only signatures containing one of these (loc,int,virt,data,str,byte,int[1M],struct,ref/out,Task<int>,oneway,graph100,...;
                              graph1000 selects the serializer comparison)
          --peers LIST        side-by-side peers: grpc-tcp,grpc-uds,grpc-xcall-shm,jsonrpc-uds,jsonrpc-xcall-shm,mpi, or none (default: all;
                              mpi: Open MPI's ping-pong as peer-mpi rows and a paired line, when Open MPI is installed)
          --out DIR           write calls.json, calls.md, calls.csv there (default: a new folder it prints)
          --full              BenchmarkDotNet's full statistics (slower); default is a quick run

        other suites:
          --suite channels [--parts ring,loop,select,pi] [--out DIR] [--help]
                                          XCall.Channels next to System.Threading.Channels, Go and Erlang: the ring, the
                                          3-process loop, select over 8 channels, Monte Carlo Pi (see docs/benchmarks.md)
          --suite mpi [--rounds-scale X]  the communicator next to Open MPI: ping-pong, Allreduce
          --suite parallel [--calls N] [--rounds R]
                                          one-way calls to a parallel object in another process, aggregated and not
          --suite concurrency [--callers N] [--ms N] [--rounds N] [--load N] [--out DIR] [--help]
                                          many callers against one server with the default settings, shm and tcp
                                          in the same run: 16 client processes, and 16 threads on one connection

        single measurements instead of the run:
          --limits                        the machine-limit probes only (C and C# side by side), and peer-mpi
          --side-by-side shm|tcp [ROUNDS] [--load N]
                                          int and byte paired with the limit probe (tcp: the busy-polling one;
                                          shm: also int with Open MPI's 4 B ping-pong), every round printed;
                                          --load N: each round also times int while N busy threads run in another
                                          process (more busy threads than cores), beside the unloaded int burst
          --latency shm|tcp [CALLS]       int calls timed one by one: percentiles (p50 to p99.99, max) and mean
          --concurrent-probe shm|tcp      int against a server with the default concurrent dispatch
          --dispatch-pair shm|tcp [ROUNDS [CALLS]] int with no option set paired with int under DispatchMode.Inline,
                                          and the callback call with no option set, in alternating bursts
          --loop shm|tcp int|callback|oneway|pipelined|pipelined-valuetask|threads SECONDS
                                          one form of call in a loop for a profiler to attach to (prints both
                                          pids; perf record -p, see docs/benchmarks.md), then its rate and bytes per call
          --async-probe shm|tcp           awaited Task<int> calls, alone and while one long call stays pending
          --stream [shm|tcp] [ITEMS [ROUNDS]] an IAsyncEnumerable<int> of ITEMS (1,000,000) pulled to its end, defaults;
                                          items/s per round, median, and the shm budget line (>= 10 M items/s)
          --peer-pair [ROUNDS [CALLS]]    gRPC and StreamJsonRpc int over a Unix socket and over XCall shm (the peer
                                          rows' servers and clients), alternating bursts of CALLS (15 rounds of 400, 8 s warm-up):
                                          per-round ratios, medians, the budget lines (XCall shm >= 1.5x faster)
          --peer-loop ROW SECONDS         one peer row (grpc-uds, grpc-xcall-shm, jsonrpc-uds, ...) called in bursts for
                                          SECONDS after 8 s of warm-up, for a profiler to attach to (prints both pids)
        """;
}

internal sealed class HelpRequestedException : Exception;
