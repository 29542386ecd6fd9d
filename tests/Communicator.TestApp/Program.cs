using XCall.Cluster;
using XCall.Communicator;
using XCall.Communicator.TestApp;

// The program the communicator tests run as real processes under xcall run, mpirun or srun.
//   check       every rank runs CommunicatorChecks (matching rules, SendSync, large messages, every collective,
//               Split), prints the address it reaches each peer at, then "rank R of N: all checks passed" or
//               the first failure (exit 1).
//   fail CODE   the last rank exits with CODE after a barrier; the others wait for a message from it, print the
//               RankFailedException they get and exit with 7.
string mode = args.Length > 0 ? args[0] : "check";
Communicator world = await Communicator.JoinAsync();
Console.WriteLine($"rank {world.Rank} of {world.Size} joined (launcher {world.Cluster.Environment.Launcher})");
if (mode == "check")
{
    try
    {
        CommunicatorChecks.Run(world, Console.WriteLine);
        for (int peer = 0; peer < world.Size; peer++)
        {
            if (peer != world.Rank)
            {
                Console.WriteLine($"rank {world.Rank} reaches rank {peer} at {world.Cluster.GetAddress(peer)}");
            }
        }
        Console.WriteLine($"rank {world.Rank} of {world.Size}: all checks passed");
    }
    catch (Exception e)
    {
        Console.WriteLine($"rank {world.Rank} of {world.Size}: check failed: {e}");
        Console.Out.Flush();
        Environment.Exit(1);
    }
    await world.DisposeAsync();
    return 0;
}

int code = int.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture);
world.Barrier();
if (world.Rank == world.Size - 1)
{
    Console.WriteLine($"rank {world.Rank} exits with {code}");
    Console.Out.Flush();
    Environment.Exit(code);
}
try
{
    int value = world.Receive<int>(world.Size - 1, 0);
    Console.WriteLine($"rank {world.Rank} received {value} from a rank that exited");
    return 1;
}
catch (RankFailedException e)
{
    Console.WriteLine($"rank {world.Rank} saw: {e.Message}");
}
return 7;
