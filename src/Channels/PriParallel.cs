namespace XCall.Channels;

/// <summary>
/// A <see cref="Parallel"/> whose processes are listed in decreasing priority: they start in that
/// order, and each <see cref="ThreadProcess"/> gets a thread priority from Highest down by its rank
/// (clamped at Lowest). Lightweight processes share the thread pool, which has no priorities, so
/// for them the order is the only difference.
/// </summary>
public sealed class PriParallel : IProcess
{
    private readonly List<IProcess> _processes;

    /// <summary>Creates a PriParallel; the first process has the highest priority.</summary>
    public PriParallel(params IEnumerable<IProcess> processes) => _processes = [.. processes];

    /// <summary>Runs every process and waits for all; failures as for <see cref="Parallel"/>.</summary>
    public Task RunAsync(CancellationToken cancellationToken = default)
    {
        for (int i = 0; i < _processes.Count; i++)
        {
            if (_processes[i] is ThreadProcess thread)
            {
                thread.Priority = (ThreadPriority)Math.Max((int)ThreadPriority.Lowest, (int)ThreadPriority.Highest - i);
            }
        }
        return ProcessGroup.RunAsync(_processes, cancellationToken);
    }

    /// <summary>Blocking form of <see cref="RunAsync"/>.</summary>
    public void Run() => Blocking.Wait(RunAsync());
}
