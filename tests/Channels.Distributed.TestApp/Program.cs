using System.Globalization;
using XCall.Channels;
using XCall.Channels.Distributed;
using XCall.Channels.Distributed.TestApp;
using XCall.Cluster;

// The program the distributed-channel tests run as real processes (xcall run -n N, or started one by one), and
// unchanged in one process: started without a launcher it runs stand-alone, with every rank's part as a process
// of one Parallel. Each rank's part prints lines the tests check.
//   kinds       each channel kind named across processes (ints, strings and a data class)
//   rendezvous  an unbuffered write waits for the remote read; a buffered one does not
//   crossed     one thread reads two channels in turn while another process writes both from two threads
//   select      FairSelect over guards written from other processes, then a timer guard
//   poison      poison crosses from a writer to the hosting reader, and from the hosting writer to remote readers
//   barrier     a named barrier holds every rank for three rounds; a named bucket releases the other ranks
//   kill        started one by one: rank 1 hosts a channel rank 0 writes to and dies by kill -9 while the write
//               waits; rank 0 sees the failure, then ranks 0 and 2 go on talking
//   buffered    buffered channels: values in order, many writers, poison and completion after values, a lone write
//   killbuffered started one by one: rank 0 writes on to a buffered channel rank 1 hosts, reads from and kills -9
string mode = args.Length > 0 ? args[0] : "kinds";
int standAloneRanks = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 3;
await using CspWorld csp = await CspWorld.JoinAsync();
int size = csp.IsStandAlone ? standAloneRanks : csp.Size;
Console.WriteLine($"rank {csp.Rank} of {size} joined ({(csp.IsStandAlone ? "stand-alone" : "world")}, pid {Environment.ProcessId})");
if (csp.World is { } world && world.Rank != 0)
{
    Console.WriteLine($"rank {world.Rank} reaches rank 0 at {world.GetAddress(0)}");
}

Func<int, Task> part = mode switch
{
    "kinds" => rank => Parts.KindsAsync(csp, rank, size),
    "rendezvous" => rank => Parts.RendezvousAsync(csp, rank),
    "blockingread" => rank => Parts.BlockingReadAsync(csp, rank),
    "crossed" => rank => Parts.CrossedAsync(csp, rank),
    "select" => rank => Parts.SelectAsync(csp, rank, size),
    "poison" => rank => Parts.PoisonAsync(csp, rank, size),
    "barrier" => rank => Parts.BarrierAsync(csp, rank, size),
    "kill" => rank => Parts.KillAsync(csp, rank),
    "buffered" => rank => Parts.BufferedAsync(csp, rank, size),
    "batched" => rank => Parts.BatchedAsync(csp, rank, size),
    "killbuffered" => rank => Parts.KillBufferedAsync(csp, rank),
    _ => throw new ArgumentException($"unknown mode {mode}"),
};
IEnumerable<int> mine = csp.IsStandAlone ? Enumerable.Range(0, size) : [csp.Rank];
await new XCall.Channels.Parallel(mine.Select(rank => (Func<CancellationToken, Task>)(_ => part(rank)))).RunAsync();
Console.WriteLine($"rank {csp.Rank} done");
return 0;
