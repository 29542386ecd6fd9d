namespace XCall.Channels.Tests;

/// <summary>Bounds for awaits, only so that a broken build fails instead of hanging.</summary>
internal static class Within
{
    internal static readonly TimeSpan Limit = TimeSpan.FromSeconds(20);

    internal static Task<T> Bounded<T>(this ValueTask<T> pending) => pending.AsTask().WaitAsync(Limit);

    internal static Task Bounded(this ValueTask pending) => pending.AsTask().WaitAsync(Limit);

    internal static Task Bounded(this Task pending) => pending.WaitAsync(Limit);

    internal static Task<T> Bounded<T>(this Task<T> pending) => pending.WaitAsync(Limit);

    /// <summary>Polls a condition that nothing can await (a count of waiters), yielding between looks.</summary>
    internal static async Task UntilAsync(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Limit;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "condition not reached in time");
            await Task.Yield();
        }
    }
}
