namespace XCall.Channels.Distributed;

/// <summary>
/// What a worker host offers <see cref="DistParallel"/>: a slot reserved for one process, then the process run in
/// it. The process travels as the bytes its <see cref="ProcessKinds"/> wrote.
/// </summary>
[Remotable]
internal interface IProcessRunner
{
    /// <summary>
    /// Reserves a slot for a process of <paramref name="program"/>: a lease (above 0) that <see cref="RunAsync"/> or
    /// <see cref="Release"/> must use soon, 0 when every slot is taken, -1 when this worker runs another program.
    /// </summary>
    ValueTask<long> ReserveAsync(string program);

    /// <summary>Runs the process in the slot of <paramref name="lease"/>; completes when it ends, with its failure.</summary>
    Task RunAsync(long lease, byte[] process, CancellationToken cancellationToken);

    /// <summary>Gives back the slot of a lease that will not run.</summary>
    void Release(long lease);
}
