namespace XCall.Hosting.Tests;

[Remotable]
public interface IGate
{
    /// <summary>Returns twice <paramref name="value"/> once the test opens the gate.</summary>
    Task<int> PassAsync(int value, CancellationToken cancellationToken);
}

/// <summary>Holds every call until <see cref="Open"/>; <see cref="Entered"/> completes when the first call arrives.</summary>
public sealed class Gate : IGate
{
    private readonly TaskCompletionSource _open = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _entered = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _calls;

    /// <summary>How many calls arrived.</summary>
    public int Calls => Volatile.Read(ref _calls);

    public Task Entered => _entered.Task;

    public void Open() => _open.TrySetResult();

    public async Task<int> PassAsync(int value, CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _calls);
        _entered.TrySetResult();
        await _open.Task.ConfigureAwait(false);
        return 2 * value;
    }
}
