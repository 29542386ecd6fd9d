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

    public Task Entered => _entered.Task;

    public void Open() => _open.TrySetResult();

    public async Task<int> PassAsync(int value, CancellationToken cancellationToken)
    {
        _entered.TrySetResult();
        await _open.Task.ConfigureAwait(false);
        return 2 * value;
    }
}
