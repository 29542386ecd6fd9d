using XCall.Runtime;
using XCall.Transport;

namespace XCall.Channels.Distributed;

/// <summary>
/// A value task as a connection's wait sees it (<see cref="XCallConnection.WaitReceiving(IReplyWait, TimeSpan)"/>): over
/// once the task completed (a value task's status is set before any continuation runs, so a reply read on the waiting
/// thread shows at once); a task is made of it only to block. One per thread and result type, reused.
/// </summary>
internal sealed class ValueTaskWait<T> : IReplyWait
{
    [ThreadStatic]
    private static ValueTaskWait<T>? t_spare;

    private ValueTask<T> _pending;
    private Task<T>? _task;

    public bool IsCompleted => _task?.IsCompleted ?? _pending.IsCompleted;

    public bool WaitOver => IsCompleted;

    public bool IsNested => false;

    public bool ComesBack => true; // a remote end that waits for its write or read mostly makes the next one soon after

    public bool Wait(long deadline)
    {
        _task ??= _pending.AsTask();
        try
        {
            return _task.Wait(deadline == long.MaxValue ? Timeout.Infinite : (int)Math.Clamp(deadline - Environment.TickCount64, 0, int.MaxValue));
        }
        catch (AggregateException)
        {
            return true; // completed with an exception, which reading the result throws
        }
    }

    /// <summary>Waits for <paramref name="pending"/> reading <paramref name="connection"/> meanwhile; returns its result.</summary>
    public static T WaitReceiving(ValueTask<T> pending, XCallConnection connection)
    {
        ValueTaskWait<T> wait = t_spare ?? new ValueTaskWait<T>();
        t_spare = null;
        wait._pending = pending;
        try
        {
            connection.WaitReceiving(wait, Timeout.InfiniteTimeSpan);
            return wait._task is { } task ? task.GetAwaiter().GetResult() : wait._pending.GetAwaiter().GetResult();
        }
        finally
        {
            wait._pending = default;
            wait._task = null;
            t_spare = wait;
        }
    }
}
