namespace XCall.Cluster;

/// <summary>
/// What a program offers on a worker host: it adds the services its layers serve there (the processes
/// <c>DistParallel</c> ships, the parallel objects placed there) to <see cref="WorkerHost.Services"/>. The
/// program names its setup with <see cref="XCallWorkerAttribute"/>; <c>xcall worker --assembly</c> runs it, and a
/// rank that serves as a worker passes it to <see cref="WorkerHost.StartAsync"/>.
/// </summary>
public interface IWorkerSetup
{
    /// <summary>Adds the program's services to <paramref name="host"/>; runs before the host is announced, so no caller finds them missing.</summary>
    Task ConfigureAsync(WorkerHost host, CancellationToken cancellationToken);
}
