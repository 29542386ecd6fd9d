namespace XCall.Cluster.Store;

/// <summary>
/// Rank 0's key-value store: the wire-up (every rank's card), liveness (each rank holds a
/// <see cref="WatchAsync"/> call open while it lives), the end of the world, and the name directory's entries.
/// </summary>
[Remotable]
internal interface IClusterStore
{
    /// <summary>Records <paramref name="rank"/>'s card and completes when every rank's is there, or a rank failed.</summary>
    Task<JoinReply> JoinAsync(int rank, int size, string card, CancellationToken cancellationToken);

    /// <summary>
    /// Held open by <paramref name="rank"/> while it lives: the store takes the rank for failed when the call is
    /// cancelled (its connection closed) before the rank left. Completes with another rank that failed, or -1
    /// when this rank leaves.
    /// </summary>
    Task<int> WatchAsync(int rank, CancellationToken cancellationToken);

    /// <summary>Records that <paramref name="rank"/> ends; completes when every rank has left or failed, with a failed rank or -1.</summary>
    Task<int> LeaveAsync(int rank, CancellationToken cancellationToken);

    /// <summary>True when <paramref name="rank"/> left the world (rather than failed).</summary>
    Task<bool> HasLeftAsync(int rank);

    /// <summary>Sets <paramref name="key"/> unless it is set to another value; returns the value it holds afterwards.</summary>
    Task<string> AddAsync(string key, string value);

    /// <summary>The value of <paramref name="key"/>, or null.</summary>
    Task<string?> GetAsync(string key);

    /// <summary>The value of <paramref name="key"/> once it is set.</summary>
    Task<string> WaitAsync(string key, CancellationToken cancellationToken);
}
