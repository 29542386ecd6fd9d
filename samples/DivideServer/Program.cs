using XCall;
using XCall.Parallel;

// The DivideServer of ParC#'s Fig. 2, as a parallel object: rank 0 creates it, the object manager places it on
// the next rank, and the call reads like a local one. Run: xcall run -n 2 -- dotnet XCall.Samples.DivideServer.dll
var types = new ParallelTypes().Add<IDivideServer>(() => new DivideServer(), Agglomeration.Never);
await using ParallelWorld world = await ParallelWorld.JoinAsync(types);
if (world.Rank == 0)
{
    IDivideServer server = await world.CreateAsync<IDivideServer>();
    double result = server.Divide(22, 7);
    Console.WriteLine($"22 / 7 = {result:F6}, divided on rank {world.RefOf(server).Rank} of {world.Size}");
}

/// <summary>The contract of Fig. 2.</summary>
[Remotable]
public interface IDivideServer
{
    /// <summary>Divides <paramref name="d1"/> by <paramref name="d2"/>.</summary>
    double Divide(double d1, double d2);
}

/// <summary>The object that divides, on whichever rank the placement chose.</summary>
internal sealed class DivideServer : IDivideServer
{
    public double Divide(double d1, double d2) => d1 / d2;
}
