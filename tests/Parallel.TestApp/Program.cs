using XCall;
using XCall.Parallel;
using XCall.Parallel.TestApp;

// The program the parallel tests run as real processes.
//   objects   (under xcall run) rank 0 creates one worker per rank, round robin, sends each 100,000 one-way calls,
//             checks they came in order, then a one-way call that throws; it prints what it saw. Every rank leaves.
//   kill      (ranks started one by one) rank 0 places a worker on the last rank and asks it to SIGKILL its
//             process; rank 0's next call on it must fail, naming the rank; it prints the exception.
//   probe     (two ranks) both contracts are adaptive with a grain probe and placed on the other rank: rank 0
//             creates a worker (probe: an Append, a few ns) and a spinner (probe: a 200 us spin), calls each, and
//             prints where each lives and what was measured.
//   measured  (two ranks) both contracts adaptive without a probe, placed on the other rank: rank 0 sends 20,000
//             appends to one worker and 1,500 spins of 20 us to one spinner, then creates one more of each and
//             prints where each lives and what was measured.
string mode = args.Length > 0 ? args[0] : "objects";
// A worker may be called before this rank's JoinAsync returns: it takes the rank from the launcher's environment.
int rank = XCall.Cluster.WorldEnvironment.Detect().Rank;
var types = mode == "probe"
    ? new ParallelTypes()
        .Add<IWorker>(() => new Worker(() => rank)).SetGrainProbe<IWorker>(worker =>
        {
            int next = 0;
            return () => worker.Append(next++);
        })
        .Add<ISpinner>(() => new Spinner(() => rank)).SetGrainProbe<ISpinner>(spinner => () => spinner.Spin(200))
    : mode == "measured"
        ? new ParallelTypes().Add<IWorker>(() => new Worker(() => rank)).Add<ISpinner>(() => new Spinner(() => rank))
        : new ParallelTypes().Add<IWorker>(() => new Worker(() => rank), Agglomeration.Never);
await using ParallelWorld world = await ParallelWorld.JoinAsync(types, mode is "probe" or "measured" ? new ParallelWorldOptions { Placement = new OtherRankPlacement() } : null);
Console.WriteLine($"rank {world.Rank} of {world.Size} joined (pid {Environment.ProcessId})");
if (world.Rank != 0)
{
    return 0;
}
if (mode == "objects")
{
    for (int i = 0; i < world.Size; i++)
    {
        IWorker worker = await world.CreateAsync<IWorker>();
        for (int value = 0; value < 100_000; value++)
        {
            worker.Append(value);
        }
        Console.WriteLine($"worker {i} on rank {worker.HostRank()} ({world.RefOf(worker).Rank}) counted {worker.InOrder()} in order");
        try
        {
            // A worker in this process is called directly: its one-way method throws here, at once.
            worker.Fail("boom");
            worker.InOrder();
            Console.WriteLine($"worker {i}: no failure reported");
        }
        catch (Exception e) when (e is OneWayCallFailedException or InvalidOperationException)
        {
            Console.WriteLine($"worker {i}: {e.GetType().Name}: {e.Message}");
        }
    }
    return 0;
}
if (mode == "probe")
{
    IWorker fine = await world.CreateAsync<IWorker>();
    for (int value = 0; value < 1000; value++)
    {
        fine.Append(value);
    }
    Console.WriteLine($"fine: local {world.IsLocal(fine)}, rank {fine.HostRank()}, counted {fine.InOrder()} in order; {world.Measure<IWorker>()}");
    ISpinner coarse = await world.CreateAsync<ISpinner>();
    coarse.Spin(10);
    Console.WriteLine($"coarse: local {world.IsLocal(coarse)}, rank {coarse.HostRank()}, spun {coarse.Count()}; {world.Measure<ISpinner>()}");
    return 0;
}
if (mode == "measured")
{
    IWorker first = await world.CreateAsync<IWorker>();
    ISpinner firstSpinner = await world.CreateAsync<ISpinner>();
    for (int value = 0; value < 20_000; value++)
    {
        first.Append(value);
    }
    for (int i = 0; i < 1_500; i++)
    {
        firstSpinner.Spin(20);
    }
    Console.WriteLine($"first: local {world.IsLocal(first)}, {world.IsLocal(firstSpinner)}; counted {first.InOrder()}, spun {firstSpinner.Count()}");
    IWorker fine = await world.CreateAsync<IWorker>();
    Console.WriteLine($"fine: local {world.IsLocal(fine)}, rank {fine.HostRank()}; {world.Measure<IWorker>()}");
    ISpinner coarse = await world.CreateAsync<ISpinner>();
    Console.WriteLine($"coarse: local {world.IsLocal(coarse)}, rank {coarse.HostRank()}; {world.Measure<ISpinner>()}");
    return 0;
}
IWorker victim = null!;
while (victim is null || world.RefOf(victim).Rank != world.Size - 1)
{
    victim = await world.CreateAsync<IWorker>();
}
victim.Append(0);
Console.WriteLine($"victim on rank {victim.HostRank()}");
victim.Die();
try
{
    int count = victim.InOrder();
    Console.WriteLine($"the dead worker answered {count}");
    return 1;
}
catch (XCallException e)
{
    Console.WriteLine($"call on the dead worker: {e.GetType().Name}: {e.Message}");
}
return 0;
