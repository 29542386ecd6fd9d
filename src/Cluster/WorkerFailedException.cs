namespace XCall.Cluster;

/// <summary>A worker host died or its connection closed while it ran something for this process; what it ran cannot complete.</summary>
public sealed class WorkerFailedException : XCallException
{
    /// <summary>Creates the exception for the worker named <paramref name="worker"/>.</summary>
    public WorkerFailedException(string worker, string reason, Exception? inner = null)
        : base($"Worker {worker} failed: {reason}", inner)
    {
        Worker = worker;
        Reason = reason;
    }

    /// <summary>The worker's name (<see cref="WorkerInfo.Name"/>).</summary>
    public string Worker { get; }

    /// <summary>Why it is taken for failed, without the "Worker N failed" that <see cref="Exception.Message"/> starts with.</summary>
    public string Reason { get; }
}
