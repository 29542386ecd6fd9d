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
