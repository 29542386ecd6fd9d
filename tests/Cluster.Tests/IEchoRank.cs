namespace XCall.Cluster.Tests;

/// <summary>What each rank of an in-process world serves.</summary>
[Remotable]
public interface IEchoRank
{
    int Rank();
}
