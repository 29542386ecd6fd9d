namespace XCall.Channels;

/// <summary>
/// A process: runs until done, talking to others only through channels, barriers and buckets.
/// A plain async method (<c>Func&lt;CancellationToken, Task&gt;</c>) is a process too; see <see cref="Parallel"/>.
/// </summary>
public interface IProcess
{
    /// <summary>Runs the process; <paramref name="cancellationToken"/> asks it to stop (Parallel cancels it when a sibling fails).</summary>
    Task RunAsync(CancellationToken cancellationToken);
}
