namespace XCall.Channels;

/// <summary>The blocking forms: wait on the same awaitables the async forms return.</summary>
internal static class Blocking
{
    internal static T Wait<T>(ValueTask<T> pending)
    {
        if (pending.IsCompleted)
        {
            return pending.GetAwaiter().GetResult();
        }
        HandOff.ReleaseDeferred();
        return pending.AsTask().GetAwaiter().GetResult();
    }

    /// <summary>As <see cref="Wait{T}(ValueTask{T})"/>, through the channel's <paramref name="waiter"/> when it has one.</summary>
    internal static T Wait<T>(ValueTask<T> pending, IBlockingWaiter? waiter)
    {
        if (waiter is null || pending.IsCompleted)
        {
            if (pending.IsCompletedSuccessfully)
            {
                waiter?.CompletedAtOnce();
            }
            return Wait(pending);
        }
        HandOff.ReleaseDeferred();
        return PendingOperation<T>.Wait(pending, waiter);
    }

    /// <summary>As <see cref="Wait(ValueTask)"/>, through the channel's <paramref name="waiter"/> when it has one.</summary>
    internal static void Wait(ValueTask pending, IBlockingWaiter? waiter)
    {
        if (waiter is null || pending.IsCompleted)
        {
            if (pending.IsCompletedSuccessfully)
            {
                waiter?.CompletedAtOnce();
            }
            Wait(pending);
            return;
        }
        HandOff.ReleaseDeferred();
        PendingOperation<bool>.Wait(pending, waiter);
    }

    internal static void Wait(ValueTask pending)
    {
        if (pending.IsCompleted)
        {
            pending.GetAwaiter().GetResult();
            return;
        }
        Wait(pending.AsTask());
    }

    internal static void Wait(Task pending)
    {
        if (!pending.IsCompleted)
        {
            HandOff.ReleaseDeferred();
        }
        pending.GetAwaiter().GetResult();
    }
}
