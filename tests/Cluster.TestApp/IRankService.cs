namespace XCall.Cluster.TestApp;

/// <summary>What every rank of the test program serves its peers.</summary>
[Remotable]
public interface IRankService
{
    /// <summary>The rank that serves it.</summary>
    int GetRank();
}
