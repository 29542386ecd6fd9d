using XCall;
using XCall.Cluster;
using XCall.Cluster.TestApp;

// The program the cluster tests run as real processes under xcall run, mpirun, or started one by one.
//   world         every rank opens every other rank's service; rank 1 registers a name that rank 2 waits for.
//   fail CODE     the last rank exits with CODE once the world is joined; the others wait for a name that never
//                 comes, print the RankFailedException they get and the one of opening the failed rank, and exit with 7.
//   fail-hold CODE  as fail, but the others then hold on until they are ended (xcall run must end them).
//   stop          the last rank stops itself (SIGSTOP) once the world is joined: alive but silent, it is taken
//                 for dead by the transports' heartbeat; the others print the failure and exit with 7.
//   names-offer NAME VALUE / names-find NAME   started alone (a world of one each): the first registers NAME-pid
//                 and NAME and waits for NAME-done; the second waits for NAME, prints it, registers NAME-done and
//                 leaves once the first has left (leaving removes a process's names).
string mode = args.Length > 0 ? args[0] : "world";
var services = new XCallServer();
// Another rank may call GetRank as soon as this rank has joined, before JoinAsync has returned here: it waits for it.
var joined = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
services.Add<IRankService>(new RankService(() => joined.Task.Wait(TimeSpan.FromSeconds(30)) ? joined.Task.Result : -1));
ClusterWorld world = await ClusterWorld.JoinAsync(new ClusterOptions { Services = services });
int rank = world.Rank;
joined.SetResult(rank);
Console.WriteLine($"rank {world.Rank} of {world.Size} joined (local rank {world.LocalRank}, node {world.Node}, launcher {world.Environment.Launcher}, pid {Environment.ProcessId})");

if (mode == "names-offer")
{
    await world.Names.RegisterAsync(args[1] + "-pid", Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture));
    await world.Names.RegisterAsync(args[1], args[2]);
    Console.WriteLine($"registered {args[1]}");
    await world.Names.WaitForAsync(args[1] + "-done", TimeSpan.FromSeconds(30));
    await world.DisposeAsync();
    return 0;
}
if (mode == "names-find")
{
    string value = await world.Names.WaitForAsync(args[1], TimeSpan.FromSeconds(30));
    Console.WriteLine($"found {args[1]} = {value}");
    int offerer = int.Parse(await world.Names.WaitForAsync(args[1] + "-pid", TimeSpan.FromSeconds(30)), System.Globalization.CultureInfo.InvariantCulture);
    using System.Diagnostics.Process offering = System.Diagnostics.Process.GetProcessById(offerer);
    await world.Names.RegisterAsync(args[1] + "-done", "yes");
    // Leaving removes the names this process registered, so it stays until the offerer has read NAME-done and left.
    await offering.WaitForExitAsync();
    await world.DisposeAsync();
    return 0;
}
if (mode == "world")
{
    for (int peer = 0; peer < world.Size; peer++)
    {
        if (peer != world.Rank)
        {
            IRankService service = await world.OpenAsync<IRankService>(peer);
            int answered = service.GetRank();
            Console.WriteLine(answered == peer ? $"rank {world.Rank} reached rank {peer} at {world.GetAddress(peer)}" : $"rank {world.Rank} got {answered} from rank {peer}");
        }
    }
    if (world.Rank == 1 % world.Size)
    {
        await world.Names.RegisterAsync("answer", $"42 from rank {world.Rank}");
    }
    if (world.Rank == 2 % world.Size)
    {
        string value = await world.Names.WaitForAsync("answer", TimeSpan.FromSeconds(30));
        Console.WriteLine($"rank {world.Rank} found answer = {value}");
    }
    await world.DisposeAsync();
    Console.WriteLine($"rank {rank} done");
    return 0;
}

if (mode == "stop" && world.Rank == world.Size - 1)
{
    Console.WriteLine($"rank {world.Rank} stops itself");
    Console.Out.Flush();
    using var stop = System.Diagnostics.Process.Start("kill", ["-STOP", Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
    await stop.WaitForExitAsync();
}
int code = mode == "stop" ? 0 : int.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture);
if (mode != "stop" && world.Rank == world.Size - 1)
{
    Console.WriteLine($"rank {world.Rank} exits with {code}");
    Console.Out.Flush();
    Environment.Exit(code);
}
try
{
    await world.Names.WaitForAsync("never", TimeSpan.FromSeconds(60));
    Console.WriteLine($"rank {world.Rank} found a name that nobody registered");
    return 1;
}
catch (RankFailedException e)
{
    Console.WriteLine($"rank {world.Rank} saw: {e.Message}");
    try
    {
        await world.OpenAsync<IRankService>(world.Size - 1);
        Console.WriteLine($"rank {world.Rank} opened the failed rank");
    }
    catch (RankFailedException again)
    {
        Console.WriteLine($"rank {world.Rank} open: {again.Message}");
    }
}
if (mode == "fail-hold")
{
    Console.Out.Flush();
    await Task.Delay(Timeout.Infinite);
}
return 7;
