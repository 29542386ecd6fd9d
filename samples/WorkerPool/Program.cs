// CSP.NET's workerpool (listings 1-3), in one process: a WorkerPool process forwards the
// processes it receives on an Any2One channel to workers that share a One2Any channel, and each
// worker runs what it reads. Poison on the listen channel shuts the whole network down.

var listen = new Any2One<IProcess>();
var toWorkers = new One2Any<IProcess>();
int done = 0;

var network = new Parallel(Poisoning.Spreading(new WorkerPool(listen.In, toWorkers.Out), listen.In, toWorkers.Out));
for (int i = 0; i < 3; i++)
{
    network.Add(Poisoning.Spreading(new Worker(toWorkers.In), toWorkers.In));
}
network.Add(async _ =>
{
    for (int job = 0; job < 10; job++)
    {
        int id = job;
        await listen.Out.WriteAsync(new Job(() =>
        {
            Console.WriteLine($"job {id} on thread {Environment.CurrentManagedThreadId}");
            Interlocked.Increment(ref done);
        }));
    }
    listen.Out.Poison();
});
await network.RunAsync();
Console.WriteLine($"{done} jobs done; every process has ended.");

/// <summary>Listing 1: forwards every process it is sent to the workers.</summary>
internal sealed class WorkerPool(IChannelIn<IProcess> listen, IChannelOut<IProcess> workers) : IProcess
{
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            IProcess p = await listen.ReadAsync(cancellationToken);
            await workers.WriteAsync(p, cancellationToken);
        }
    }
}

/// <summary>Listing 2: reads processes and runs each in its own course, one at a time.</summary>
internal sealed class Worker(IChannelIn<IProcess> processes) : IProcess
{
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            IProcess process = await processes.ReadAsync(cancellationToken);
            await process.RunAsync(cancellationToken);
        }
    }
}

/// <summary>A small process to send to the pool.</summary>
internal sealed class Job(Action work) : IProcess
{
    public Task RunAsync(CancellationToken cancellationToken)
    {
        work();
        return Task.CompletedTask;
    }
}
