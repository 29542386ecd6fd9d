namespace XCall.Cluster;

/// <summary>A rank of the world died or left its connections before the world ended; what involved it cannot complete.</summary>
public sealed class RankFailedException : XCallException
{
    /// <summary>Creates the exception for <paramref name="rank"/>.</summary>
    public RankFailedException(int rank, string reason, Exception? inner = null)
        : base($"Rank {rank} failed: {reason}", inner)
    {
        Rank = rank;
        Reason = reason;
    }

    /// <summary>The rank that failed.</summary>
    public int Rank { get; }

    /// <summary>Why it is taken for failed, without the "Rank N failed" that <see cref="Exception.Message"/> starts with.</summary>
    public string Reason { get; }
}
