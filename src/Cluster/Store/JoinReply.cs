namespace XCall.Cluster.Store;

/// <summary>What <see cref="IClusterStore.JoinAsync"/> answers: every rank's card, or the rank that failed first.</summary>
/// <param name="Cards">Each rank's card, by rank (empty when a rank failed).</param>
/// <param name="FailedRank">The rank that failed, or -1.</param>
/// <param name="Reason">Why it was taken for failed, or empty.</param>
internal sealed record JoinReply(string[] Cards, int FailedRank, string Reason);
