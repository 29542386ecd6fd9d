using XCall;
using XCall.Cluster;
using XCall.Samples.WorkerPool;

[assembly: XCallWorker(typeof(PoolSetup))]

// CSP.NET's workerpool (listings 1-3) run by DistParallel (listing 6). A WorkerPool process reads the processes
// sent to its named Any2One channel "WorkerPool" and writes each to the named One2Any "workers"; Worker processes
// read from it and run what they read, one at a time; a Client sends ten jobs and poisons the pool, and the poison
// spreads to every worker. DistParallel ships the Workers to the free workers of the world and runs the rest here.
//
//   xcall run -n 3 -- dotnet XCall.Samples.WorkerPool.dll   rank 0 runs the network; ranks 1 and 2 serve as
//                                                            workers, so two Workers run there and one here
//   dotnet XCall.Samples.WorkerPool.dll                      stand-alone: everything in this process
//   xcall worker --assembly XCall.Samples.WorkerPool.dll      a worker for programs of this machine (see docs)
const int Jobs = 10;
await using CspWorld csp = await CspWorld.JoinAsync();
if (csp.World is { Rank: > 0 } world)
{
    // Serve as a worker until rank 0 is done: leaving the world (disposing csp) waits for every rank.
    await WorkerHost.StartAsync(world, configure: (host, _) => PoolSetup.Serve(host, csp));
    Console.WriteLine($"rank {world.Rank} serves as a worker (pid {Environment.ProcessId})");
    return;
}
if (csp.World is { } master)
{
    await master.WaitForWorkerRanksAsync(TimeSpan.FromSeconds(60));
}

var network = new DistParallel(csp, PoolSetup.Kinds,
    new Worker("workers"), new Worker("workers"), new Worker("workers"),
    new WorkerPool("WorkerPool", "workers"),
    new Client("WorkerPool", "results", Jobs),
    new Collector("results", Jobs));
await network.RunAsync();
Console.WriteLine($"the Workers ran on: {string.Join(", ", network.Placements.Take(3))}");
Console.WriteLine("every process has ended.");

namespace XCall.Samples.WorkerPool
{
    /// <summary>The processes that travel: Workers to the workers, Jobs through the named channels. The ids are how they travel.</summary>
    [XCallKnownType(typeof(Worker), 1)]
    [XCallKnownType(typeof(Job), 2)]
    public interface IPoolProcess : IProcess;

    /// <summary>Listing 1: forwards every process sent to the named channel <paramref name="Listen"/> to the workers.</summary>
    public sealed record WorkerPool(string Listen, string Workers) : IProcess
    {
        /// <inheritdoc/>
        public async Task RunAsync(CancellationToken cancellationToken)
        {
            CspWorld world = CspWorld.Current!;
            Any2One<IPoolProcess> listen = await world.CreateAny2OneAsync(Listen, codec: PoolSetup.Codec, cancellationToken: cancellationToken);
            One2Any<IPoolProcess> workers = await world.CreateOne2AnyAsync(Workers, codec: PoolSetup.Codec, cancellationToken: cancellationToken);
            await Poisoning.Spreading(async token =>
            {
                while (true)
                {
                    IPoolProcess p = await listen.In.ReadAsync(token);
                    await workers.Out.WriteAsync(p, token);
                }
            }, listen.In, workers.Out)(cancellationToken);
        }
    }

    /// <summary>Listing 2: reads processes from the named channel <paramref name="Processes"/> and runs each, one at a time.</summary>
    public sealed record Worker(string Processes) : IPoolProcess
    {
        /// <inheritdoc/>
        public async Task RunAsync(CancellationToken cancellationToken)
        {
            IChannelIn<IPoolProcess> processes = await CspWorld.Current!.OpenInAsync(Processes, PoolSetup.Codec, cancellationToken);
            await Poisoning.Spreading(async token =>
            {
                while (true)
                {
                    IPoolProcess process = await processes.ReadAsync(token);
                    await process.RunAsync(token);
                }
            }, processes)(cancellationToken);
        }
    }

    /// <summary>A small process to send to the pool: sums 1..<paramref name="N"/> and reports where it ran.</summary>
    public sealed record Job(int Id, long N, string Results) : IPoolProcess
    {
        /// <inheritdoc/>
        public async Task RunAsync(CancellationToken cancellationToken)
        {
            long sum = 0;
            for (long i = 1; i <= N; i++)
            {
                sum += i;
            }
            CspWorld world = CspWorld.Current!;
            IChannelOut<string> results = await world.OpenOutAsync<string>(Results, cancellationToken: cancellationToken);
            await results.WriteAsync($"job {Id}: sum 1..{N} = {sum}, on rank {world.Rank} (pid {Environment.ProcessId})", cancellationToken);
        }
    }

    /// <summary>Sends <paramref name="Count"/> jobs to the pool's listen channel, then poisons it, which ends the network.</summary>
    public sealed record Client(string Listen, string Results, int Count) : IProcess
    {
        /// <inheritdoc/>
        public async Task RunAsync(CancellationToken cancellationToken)
        {
            IChannelOut<IPoolProcess> pool = await CspWorld.Current!.OpenOutAsync(Listen, PoolSetup.Codec, cancellationToken);
            for (int id = 0; id < Count; id++)
            {
                await pool.WriteAsync(new Job(id, 20_000_000L + id, Results), cancellationToken);
            }
            pool.Poison();
        }
    }

    /// <summary>Prints the <paramref name="Count"/> results the jobs write to the named channel <paramref name="Results"/>.</summary>
    public sealed record Collector(string Results, int Count) : IProcess
    {
        /// <inheritdoc/>
        public async Task RunAsync(CancellationToken cancellationToken)
        {
            Any2One<string> results = await CspWorld.Current!.CreateAny2OneAsync<string>(Results, cancellationToken: cancellationToken);
            for (int i = 0; i < Count; i++)
            {
                Console.WriteLine(await results.In.ReadAsync(cancellationToken));
            }
            Console.WriteLine($"{Count} jobs done");
        }
    }

    /// <summary>Only here so that the generator emits the marshaller of <see cref="IPoolProcess"/> and its known types.</summary>
    [Remotable]
    public interface IShippedProcesses
    {
        /// <summary>Takes a process.</summary>
        void Take(IPoolProcess process);
    }

    /// <summary>What this program serves on a worker host: its Workers (and, through them, its Jobs).</summary>
    public sealed class PoolSetup : IWorkerSetup
    {
        /// <summary>How the pool's processes travel through named channels.</summary>
        public static ChannelCodec<IPoolProcess> Codec { get; } = ChannelCodec.Of<IPoolProcess, XCall.Generated.XCall_Samples_WorkerPool_IPoolProcess_XCallMarshaller>();

        /// <summary>The processes DistParallel ships.</summary>
        public static ProcessKinds Kinds { get; } = ProcessKinds.Of<IPoolProcess, XCall.Generated.XCall_Samples_WorkerPool_IPoolProcess_XCallMarshaller>();

        /// <summary>Offers this program's processes on <paramref name="host"/>, run with <paramref name="csp"/>.</summary>
        public static Task Serve(WorkerHost host, CspWorld csp)
        {
            DistParallel.Serve(host, csp, Kinds);
            return Task.CompletedTask;
        }

        /// <inheritdoc/>
        public Task ConfigureAsync(WorkerHost host, CancellationToken cancellationToken) => Serve(host, CspWorld.Attach(host.World));
    }
}
