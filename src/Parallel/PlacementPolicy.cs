namespace XCall.Parallel;

/// <summary>
/// Where the object manager puts a new parallel object: a rank of the world (this rank's own process included).
/// Derive to plug in another policy; the built-in ones are <see cref="RoundRobin"/>, <see cref="LeastLoaded"/>,
/// <see cref="Local"/> and <see cref="ByKey"/>.
/// </summary>
public abstract class PlacementPolicy
{
    /// <summary>Each creation on the next rank, starting with the one after the creator's.</summary>
    public static PlacementPolicy RoundRobin { get; } = new RoundRobinPlacement();

    /// <summary>
    /// On the rank hosting the fewest objects, counted afresh at each creation (so objects created in a burst do
    /// not pile onto one rank whose count was read once); ties go round robin.
    /// </summary>
    public static PlacementPolicy LeastLoaded { get; } = new LeastLoadedPlacement();

    /// <summary>In the creator's process.</summary>
    public static PlacementPolicy Local { get; } = new LocalPlacement();

    /// <summary>On the rank a stable hash of the creation's key names: the same key, the same rank, on every rank.</summary>
    public static PlacementPolicy ByKey { get; } = new KeyPlacement();

    /// <summary>The rank to create the object on, 0 to <see cref="PlacementContext.Size"/> - 1.</summary>
    public abstract ValueTask<int> PlaceAsync(PlacementContext context, CancellationToken cancellationToken);

    private sealed class RoundRobinPlacement : PlacementPolicy
    {
        public override ValueTask<int> PlaceAsync(PlacementContext context, CancellationToken cancellationToken) =>
            ValueTask.FromResult((int)((context.Rank + 1 + context.Sequence) % context.Size));
    }

    private sealed class LeastLoadedPlacement : PlacementPolicy
    {
        public override async ValueTask<int> PlaceAsync(PlacementContext context, CancellationToken cancellationToken)
        {
            int[] loads = await context.GetLoadsAsync(cancellationToken).ConfigureAwait(false);
            int least = loads.Min();
            // Among the least loaded, go round from the creation's sequence, so equal ranks take turns.
            for (int step = 0; step < loads.Length; step++)
            {
                int rank = (int)((context.Rank + 1 + context.Sequence + step) % loads.Length);
                if (loads[rank] == least)
                {
                    return rank;
                }
            }
            return context.Rank;
        }
    }

    private sealed class LocalPlacement : PlacementPolicy
    {
        public override ValueTask<int> PlaceAsync(PlacementContext context, CancellationToken cancellationToken) => ValueTask.FromResult(context.Rank);
    }

    private sealed class KeyPlacement : PlacementPolicy
    {
        public override ValueTask<int> PlaceAsync(PlacementContext context, CancellationToken cancellationToken)
        {
            string key = context.Key ?? throw new ArgumentException("Placement by key needs a key: pass one to CreateAsync.");
            // FNV-1a over the UTF-16 code units: the same on every rank and every run (string.GetHashCode is not).
            uint hash = 2166136261;
            foreach (char c in key)
            {
                hash = (hash ^ c) * 16777619;
            }
            return ValueTask.FromResult((int)(hash % (uint)context.Size));
        }
    }
}
