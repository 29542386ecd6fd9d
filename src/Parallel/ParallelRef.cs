namespace XCall.Parallel;

/// <summary>
/// Where a parallel object lives, as a plain value: pass it as an argument or result of a contract, and
/// <see cref="ParallelWorld.Attach{T}"/> turns it back into a callable object on any rank.
/// </summary>
/// <param name="Rank">The rank that hosts the object.</param>
/// <param name="ObjectId">The object's id on that rank.</param>
public readonly record struct ParallelRef(int Rank, ulong ObjectId);
