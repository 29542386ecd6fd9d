namespace XCall.Transport.Tcp;

/// <summary>
/// Runs blocking connection set-up (connect, TLS, key proofs, preamble) on a short-lived thread of its
/// own. The set-up must use blocking calls (see <see cref="SocketLink"/>), and doing that on pool threads
/// would starve the pool whenever several peers are slow to answer.
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
