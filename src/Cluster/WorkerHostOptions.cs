namespace XCall.Cluster;

/// <summary>Settings of a <see cref="WorkerHost"/>.</summary>
public sealed record WorkerHostOptions
{
    /// <summary>The defaults.</summary>
    public static WorkerHostOptions Default { get; } = new();

    /// <summary>
    /// The pool the worker joins: programs find the workers of their pool (<see cref="ClusterWorld.FindWorkersAsync"/>).
    /// Null takes <c>XCALL_WORKER_POOL</c>, else <c>default</c>.
    /// </summary>
    public string? Pool { get; init; }

    /// <summary>How many processes the worker runs at once. Default 1, as a CSP.NET worker runs one process at a time.</summary>
    public int Slots { get; init; } = 1;

    /// <summary>
    /// An extra address the worker's services answer at, such as <c>tcp://0.0.0.0:7000/xcall-worker</c>, for programs
    /// on other machines that name it in <c>XCALL_WORKERS</c>; null serves only the world's own addresses.
    /// </summary>
    public string? Listen { get; init; }
}
