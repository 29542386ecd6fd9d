namespace XCall.Parallel;

/// <summary>What a <see cref="PlacementPolicy"/> knows of one creation.</summary>
public sealed class PlacementContext
{
    private readonly Func<CancellationToken, Task<int[]>> _loads;

    internal PlacementContext(int rank, int size, long sequence, string contract, string? key, Func<CancellationToken, Task<int[]>> loads) =>
        (Rank, Size, Sequence, Contract, Key, _loads) = (rank, size, sequence, contract, key, loads);

    /// <summary>The creator's rank.</summary>
    public int Rank { get; }

    /// <summary>How many ranks the world has.</summary>
    public int Size { get; }

    /// <summary>How many objects this rank placed before this one (0 for its first).</summary>
    public long Sequence { get; }

    /// <summary>The contract's name.</summary>
    public string Contract { get; }

    /// <summary>The key the creator passed, or null.</summary>
    public string? Key { get; }

    /// <summary>How many objects each rank hosts now, by rank (one call to every other rank).</summary>
    public Task<int[]> GetLoadsAsync(CancellationToken cancellationToken = default) => _loads(cancellationToken);
}
