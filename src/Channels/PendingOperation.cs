namespace XCall.Channels;

/// <summary>
/// A blocking read or write that an <see cref="IBlockingWaiter"/> waits for: it polls the operation's value task
/// (whose status is set before any continuation runs, so a completion made on this very thread shows at once) and
/// makes a task of it only to block. One per thread and result type, reused; a write's is <c>PendingOperation&lt;bool&gt;</c>
/// holding its untyped value task.
/// </summary>
internal sealed class PendingOperation<T> : IPendingOperation
{
    [ThreadStatic]
    private static PendingOperation<T>? t_spare;

    private ValueTask<T> _pending;
    private ValueTask _untyped;
    private bool _isUntyped;
    private Task? _task;

    public bool IsCompleted => _task?.IsCompleted ?? (_isUntyped ? _untyped.IsCompleted : _pending.IsCompleted);

    public bool Wait(TimeSpan timeout)
    {
        _task ??= _isUntyped ? _untyped.AsTask() : _pending.AsTask();
        try
        {
            return _task.Wait(timeout);
        }
        catch (AggregateException)
        {
            return true; // completed with an exception, which reading the result throws
        }
    }

    /// <summary>Waits for <paramref name="pending"/> (not completed) through <paramref name="waiter"/>; returns its result.</summary>
    internal static T Wait(ValueTask<T> pending, IBlockingWaiter waiter)
    {
        PendingOperation<T> operation = Rent();
        operation._pending = pending;
        try
        {
            operation.WaitThrough(waiter);
            return operation._task is { } task ? ((Task<T>)task).GetAwaiter().GetResult() : operation._pending.GetAwaiter().GetResult();
        }
        finally
        {
            operation.Return();
        }
    }

    /// <summary>Waits for <paramref name="pending"/> (not completed) through <paramref name="waiter"/>.</summary>
    internal static void Wait(ValueTask pending, IBlockingWaiter waiter)
    {
        PendingOperation<T> operation = Rent();
        operation._untyped = pending;
        operation._isUntyped = true;
        try
        {
            operation.WaitThrough(waiter);
            if (operation._task is { } task)
            {
                task.GetAwaiter().GetResult();
            }
            else
            {
                operation._untyped.GetAwaiter().GetResult();
            }
        }
        finally
        {
            operation.Return();
        }
    }

    private static PendingOperation<T> Rent()
    {
        PendingOperation<T> operation = t_spare ?? new PendingOperation<T>();
        t_spare = null;
        return operation;
    }

    private void WaitThrough(IBlockingWaiter waiter)
    {
        try
        {
            waiter.Wait(this);
        }
        catch (Exception)
        {
            // The waiter only chooses how to wait: the operation is still pending here and must be waited for.
        }
        if (!IsCompleted)
        {
            Wait(Timeout.InfiniteTimeSpan);
        }
    }

    private void Return()
    {
        _pending = default;
        _untyped = default;
        _isUntyped = false;
        _task = null;
        t_spare = this;
    }
}
