namespace XCall.Cluster.TestApp;

/// <summary>Answers with the rank of this process.</summary>
internal sealed class RankService(Func<int> rank) : IRankService
{
    public int GetRank() => rank();
}
