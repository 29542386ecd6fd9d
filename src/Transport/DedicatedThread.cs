namespace XCall.Transport;

/// <summary>
/// Runs blocking connection set-up (a TCP connect, TLS, key proofs and preamble; a shared-memory handshake) on a
/// short-lived thread of its own. The set-up uses blocking calls, and doing that on pool threads would starve the
/// pool whenever several peers are slow to answer, and could not even start while the pool is starved.
/// </summary>
internal static class DedicatedThread
{
    public static Task<T> Run<T>(Func<T> work, string name)
    {
        var completion = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            try
            {
                completion.SetResult(work());
            }
            catch (OperationCanceledException ex)
            {
                completion.SetCanceled(ex.CancellationToken); // as Task.Run ends work its token stopped
            }
            catch (Exception ex)
            {
                completion.SetException(ex);
            }
        })
        {
            IsBackground = true,
            Name = name,
        };
        thread.UnsafeStart();
        return completion.Task;
    }

    public static void Run(Action work, string name)
    {
        var thread = new Thread(() => work()) { IsBackground = true, Name = name };
        thread.UnsafeStart();
    }
}
