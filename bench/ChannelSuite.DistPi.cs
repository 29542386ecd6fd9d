using System.Diagnostics;
using System.Globalization;
using XCall.Channels;
using XCall.Channels.Distributed;
using XCall.Cluster;
using XCall.Marshal;

namespace XCall.Bench;

/// <summary>
/// Monte Carlo Pi by DistParallel (CSP.NET's listing 6 way): rank 0 ships one share of the darts to each worker
/// rank and runs one share itself, against the sequential loop in this process measured just before, in
/// alternating rounds as the named-channel Pi (ChannelSuite.NetPi.cs) is. The time runs from DistParallel's start (the worker ranks are
/// serving) to its return, so it holds finding the workers, reserving their slots and shipping the processes.
/// </summary>
internal static partial class ChannelSuite
{
    private static readonly ProcessKinds s_piKinds = ProcessKinds.Of<PiShare, PiShareMarshaller>();

    private static void RunDistPi(SuiteOptions options, SuiteLog log, List<CallResult> results) =>
        RunPiOverProcesses("rank 0 ships a share to each worker rank (ranks in separate OS processes over shm) and runs one", "DistParallel ms", "dist-pi", options, log, results, budget: false);

    /// <summary>One rank: rank 0 runs the DistParallel; the others serve as workers until it is done.</summary>
    private static int DistPiChild(long darts)
    {
        return RunAsync().GetAwaiter().GetResult();

        async Task<int> RunAsync()
        {
            await using CspWorld csp = await CspWorld.JoinAsync();
            WarmUpPi(); // the kernel at its final tier before the clock starts
            if (csp.World is { Rank: > 0 } world)
            {
                await WorkerHost.StartAsync(world, configure: (host, _) =>
                {
                    DistParallel.Serve(host, csp, s_piKinds);
                    return Task.CompletedTask;
                });
                return 0;
            }
            if (csp.World is { } master)
            {
                await master.WaitForWorkerRanksAsync(TimeSpan.FromSeconds(60));
            }
            int size = csp.Size;
            Any2One<long> hits = await csp.CreateAny2OneAsync<long>("dist-hits");
            long begin = Stopwatch.GetTimestamp();
            var run = new DistParallel(csp, s_piKinds, Enumerable.Range(0, size)
                .Select(rank => (IProcess)new PiShare((darts / size) + (rank < darts % size ? 1 : 0), 115 + (rank * 10))));
            Task running = run.RunAsync();
            long total = 0;
            for (int i = 0; i < size; i++)
            {
                total += await hits.In.ReadAsync();
            }
            await running;
            double ms = Stopwatch.GetElapsedTime(begin).TotalMilliseconds;
            int remote = run.Placements.Count(p => p != DistParallel.Local);
            if (remote != size - 1)
            {
                return Fail($"DistParallel placed {remote} shares on workers, not {size - 1}: {string.Join(", ", run.Placements)}");
            }
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RESULT {ms:0.0} {total}"));
            return 0;
        }
    }

    /// <summary>One share of the darts, thrown with its own seed; its hits go to the named channel <c>dist-hits</c>.</summary>
    private sealed class PiShare(long darts, int seed) : IProcess
    {
        public long Darts => darts;

        public int Seed => seed;

        public async Task RunAsync(CancellationToken cancellationToken)
        {
            IChannelOut<long> hits = await CspWorld.Current!.OpenOutAsync<long>("dist-hits", cancellationToken: cancellationToken);
            await hits.WriteAsync(CountHits(darts, new Random(seed)), cancellationToken);
        }
    }

    /// <summary>A marshaller written by hand (any <see cref="IMarshaller{T}"/> serves <see cref="ProcessKinds"/>): darts, then seed.</summary>
    private sealed class PiShareMarshaller : IMarshaller<PiShare>
    {
        public static void Write(ref MarshalWriter writer, PiShare value)
        {
            writer.Write(value.Darts);
            writer.WriteInt32(value.Seed);
        }

        public static PiShare Read(ref MarshalReader reader) => new(reader.Read<long>(), reader.Read<int>());
    }
}
