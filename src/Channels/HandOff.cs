using System.Threading.Tasks.Sources;

namespace XCall.Channels;

/// <summary>
/// Completes a waiting process so that, where it is safe, its continuation runs at once on the
/// completing thread instead of going through the thread pool.
/// </summary>
/// <remarks>
/// Inline is safe when the completer holds no lock (callers complete outside their locks) and the
/// stack is shallow: a ring of processes each handing to the next would otherwise nest one frame
/// per hop, so past <see cref="MaxInlineDepth"/> nested hand-offs the continuation is queued.
/// Dedicated process threads never run other processes' continuations, so a blocking process
/// keeps its thread to itself.
/// </remarks>
internal static class HandOff
{
    /// <summary>Nested inline hand-offs allowed on one thread before one is queued instead.</summary>
    internal const int MaxInlineDepth = 32;

    [ThreadStatic]
    private static int t_depth;

    [ThreadStatic]
    private static bool t_dedicated;

    /// <summary>Marks the current thread as a dedicated process thread for its lifetime.</summary>
    internal static void MarkDedicatedThread() => t_dedicated = true;

    internal static void SetResult<TResult>(ref ManualResetValueTaskSourceCore<TResult> core, TResult result)
    {
        core.RunContinuationsAsynchronously = t_dedicated || t_depth >= MaxInlineDepth;
        t_depth++;
        try
        {
            core.SetResult(result);
        }
        finally
        {
            t_depth--;
        }
    }

    /// <summary>Failures (poison, cancellation) always go through the pool: they often come in bulk from one thread.</summary>
    internal static void SetException<TResult>(ref ManualResetValueTaskSourceCore<TResult> core, Exception error)
    {
        core.RunContinuationsAsynchronously = true;
        core.SetException(error);
    }
}
