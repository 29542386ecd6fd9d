namespace XCall.Channels;

/// <summary>Runs processes together for <see cref="Parallel"/> and <see cref="PriParallel"/>.</summary>
internal static class ProcessGroup
{
    /// <summary>
    /// Starts every process on the thread pool, in order (a process that computes before its first await
    /// does not hold up the others), waits for all, cancels the rest on the first failure and
    /// throws every failure in one <see cref="AggregateException"/>.
    /// </summary>
    internal static async Task RunAsync(IReadOnlyList<IProcess> processes, CancellationToken cancellationToken)
    {
        using var siblings = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var running = new Task[processes.Count];
        for (int i = 0; i < running.Length; i++)
        {
            running[i] = RunOneAsync(processes[i], siblings);
        }
        try
        {
            await Task.WhenAll(running).ConfigureAwait(false);
            return;
        }
        catch
        {
            // Examined below, task by task.
        }
        var failures = new List<Exception>();
        foreach (Task t in running)
        {
            if (t.IsFaulted)
            {
                failures.AddRange(t.Exception!.InnerExceptions);
            }
        }
        if (failures.Count > 0)
        {
            throw new AggregateException("One or more processes failed.", failures);
        }
        cancellationToken.ThrowIfCancellationRequested();
        throw new OperationCanceledException(siblings.Token);
    }

    private static async Task RunOneAsync(IProcess process, CancellationTokenSource siblings)
    {
        try
        {
            // PreferFairness: the global queue is FIFO, so processes start in the order given.
            await Task.Factory.StartNew(
                () => process.RunAsync(siblings.Token),
                CancellationToken.None,
                TaskCreationOptions.PreferFairness | TaskCreationOptions.DenyChildAttach,
                TaskScheduler.Default).Unwrap().ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (siblings.IsCancellationRequested)
        {
            // Stopped because asked to: not a failure of its own.
            throw;
        }
        catch
        {
            siblings.Cancel();
            throw;
        }
    }
}
