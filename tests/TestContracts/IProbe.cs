using System.Collections.Concurrent;

namespace XCall.Tests.Contracts;

/// <summary>
/// Lets a test observe the server side of <see cref="IShapes"/> wherever it runs (in this process or in
/// a host process): one-way messages received, and long calls that started waiting.
/// </summary>
[Remotable]
public interface IProbe
{
    /// <summary>Completes when <see cref="IShapes.Post"/> has received <paramref name="message"/>.</summary>
    Task WaitPostedAsync(string message, CancellationToken cancellationToken);

    Task<string> NextStartedAsync(CancellationToken cancellationToken);

    int ProcessId();

    /// <summary>This process's live heap after a full, compacting collection (<see cref="GC.GetTotalMemory"/>).</summary>
    long LiveHeapBytes();
}

/// <summary>Reads the static channels <see cref="Shapes"/> writes to.</summary>
public sealed class Probe : IProbe
{
    // One pump drains Shapes.Posted and completes a waiter per message, so concurrent tests never
    // consume each other's messages.
    private static readonly ConcurrentDictionary<string, TaskCompletionSource> s_posted = new();
    private static readonly Lazy<Task> s_pump = new(() => Task.Run(async () =>
    {
        await foreach (string message in Shapes.Posted.Reader.ReadAllAsync())
        {
            s_posted.GetOrAdd(message, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();
        }
    }));

    public Task WaitPostedAsync(string message, CancellationToken cancellationToken)
    {
        _ = s_pump.Value;
        return s_posted.GetOrAdd(message, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task.WaitAsync(cancellationToken);
    }

    public Task<string> NextStartedAsync(CancellationToken cancellationToken) => Shapes.Started.Reader.ReadAsync(cancellationToken).AsTask();

    public int ProcessId() => Environment.ProcessId;

    public long LiveHeapBytes()
    {
        System.Runtime.GCSettings.LargeObjectHeapCompactionMode = System.Runtime.GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect();
        GC.WaitForPendingFinalizers();
        return GC.GetTotalMemory(forceFullCollection: true);
    }
}
