using XCall.Runtime;

namespace XCall.Parallel.Host;

/// <summary>An object a rank hosts: the target, its contract's dispatcher and name.</summary>
internal sealed record HostedObject(object Target, Dispatcher Dispatcher, string Contract)
{
    private int _holders = 1;

    /// <summary>
    /// The holders that can let it go (<see cref="IParallelHost.Drop"/>): one from its creation (the creator's proxy,
    /// or, for an object made in its creator's process, the creator, which never drops it), one per later
    /// <see cref="IParallelHost.Hold"/>.
    /// </summary>
    public void AddHolder() => Interlocked.Increment(ref _holders);

    /// <summary>True when the holder dropped was the last.</summary>
    public bool RemoveHolder() => Interlocked.Decrement(ref _holders) == 0;
}
