namespace XCall.Channels.Distributed;

/// <summary>The blocking forms of remote operations: wait on the awaitables the async forms return.</summary>
internal static class Blocking
{
    internal static T Wait<T>(ValueTask<T> pending) => pending.IsCompleted ? pending.GetAwaiter().GetResult() : pending.AsTask().GetAwaiter().GetResult();

    internal static void Wait(ValueTask pending)
    {
        if (pending.IsCompleted)
        {
            pending.GetAwaiter().GetResult();
            return;
        }
        pending.AsTask().GetAwaiter().GetResult();
    }
}
