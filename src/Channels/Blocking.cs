namespace XCall.Channels;

/// <summary>The blocking forms: wait on the same awaitables the async forms return.</summary>
internal static class Blocking
{
    internal static T Wait<T>(ValueTask<T> pending) =>
        pending.IsCompleted ? pending.GetAwaiter().GetResult() : pending.AsTask().GetAwaiter().GetResult();

    internal static void Wait(ValueTask pending)
    {
        if (pending.IsCompleted)
        {
            pending.GetAwaiter().GetResult();
        }
        else
        {
            pending.AsTask().GetAwaiter().GetResult();
        }
    }
}
