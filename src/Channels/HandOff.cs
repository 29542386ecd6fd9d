namespace XCall.Channels;

/// <summary>
/// Completes waiting processes so that, where it is safe, the woken process runs at once on the
/// completing thread instead of going through the thread pool.
/// </summary>
/// <remarks>
/// Inline is safe because callers complete outside their locks. Each inline completion nests the
/// woken process's frames inside the completer's, and a ring of processes each handing to the
/// next would nest one level per hop; so past <see cref="MaxInlineDepth"/> levels a completion is
/// deferred to a per-thread queue, which the outermost completion on the thread drains once the
/// stack has unwound (a trampoline: the chain goes on at depth 1, with no pool round trip). After
/// <see cref="DrainBudget"/> deferred completions in one drain the rest go to the pool, so a chain
/// that never ends cannot keep a pool thread forever. A dedicated process thread never runs other
/// processes: its completions always go to the pool.
/// </remarks>
internal static class HandOff
{
    /// <summary>Nested inline completions allowed on one thread before one is deferred.</summary>
    internal const int MaxInlineDepth = 32;

    /// <summary>Deferred completions one drain runs inline before it hands the rest to the pool.</summary>
    internal const int DrainBudget = 1 << 16;

    [ThreadStatic]
    private static int t_depth;

    [ThreadStatic]
    private static bool t_dedicated;

    [ThreadStatic]
    private static Queue<IHandOffTarget>? t_deferred;

    /// <summary>Marks the current thread as a dedicated process thread for its lifetime.</summary>
    internal static void MarkDedicatedThread() => t_dedicated = true;

    /// <summary>Completes <paramref name="target"/> now, inline where allowed, or defers it on this thread.</summary>
    internal static void Complete(IHandOffTarget target)
    {
        if (t_dedicated)
        {
            target.Complete(runContinuationAsynchronously: true);
            return;
        }
        if (t_depth >= MaxInlineDepth)
        {
            (t_deferred ??= new Queue<IHandOffTarget>()).Enqueue(target);
            return;
        }
        RunInline(target);
        if (t_depth == 0 && t_deferred is { Count: > 0 })
        {
            Drain(t_deferred);
        }
    }

    /// <summary>
    /// Before a thread blocks: the completions it deferred go to the pool, since one of them may
    /// be what it is about to wait for.
    /// </summary>
    internal static void ReleaseDeferred()
    {
        if (t_deferred is { Count: > 0 } deferred)
        {
            while (deferred.TryDequeue(out IHandOffTarget? next))
            {
                next.Complete(runContinuationAsynchronously: true);
            }
        }
    }

    private static void RunInline(IHandOffTarget target)
    {
        t_depth++;
        try
        {
            target.Complete(runContinuationAsynchronously: false);
        }
        finally
        {
            t_depth--;
        }
    }

    private static void Drain(Queue<IHandOffTarget> deferred)
    {
        int budget = DrainBudget;
        while (deferred.TryDequeue(out IHandOffTarget? next))
        {
            if (--budget >= 0)
            {
                RunInline(next);
            }
            else
            {
                next.Complete(runContinuationAsynchronously: true);
            }
        }
    }
}
