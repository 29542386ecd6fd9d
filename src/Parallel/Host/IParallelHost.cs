namespace XCall.Parallel.Host;

/// <summary>What every rank of a parallel world serves its peers: creation of objects, its load, and the batches of frames its tunnels carry.</summary>
[Remotable]
internal interface IParallelHost
{
    /// <summary>Creates an object of contract <paramref name="contract"/> (whose hash must be <paramref name="hash"/>) and returns its id on this rank.</summary>
    ulong Create(string contract, ulong hash);

    /// <summary>
    /// Drops object <paramref name="objectId"/> once the calls queued for it ran; later calls to it throw
    /// <see cref="ObjectDisposedException"/>. False when this rank hosts no such object.
    /// </summary>
    bool Release(ulong objectId);

    /// <summary>
    /// Counts one more holder of object <paramref name="objectId"/> (a rank that made a proxy of it); false when
    /// this rank hosts no such object (it was released).
    /// </summary>
    bool Hold(ulong objectId);

    /// <summary>A holder of object <paramref name="objectId"/> let its proxy go: the last one out releases it (see <see cref="Release"/>).</summary>
    void Drop(ulong objectId);

    /// <summary>How many objects this rank hosts.</summary>
    int Load();

    /// <summary>
    /// Runs the frames of batch <paramref name="sequence"/> of the tunnel from <paramref name="clientRank"/>, after every
    /// earlier batch of that tunnel; completes when each call of the batch has its reply.
    /// </summary>
    Task<BatchResult> ExchangeAsync(int clientRank, long sequence, byte[] frames);
}
