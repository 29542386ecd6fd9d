namespace XCall.Channels;

/// <summary>
/// A blocking process on a dedicated thread, for code that blocks (blocking Read / Write, I/O, long
/// computations) and should not hold a thread-pool thread. It uses the same channels as
/// lightweight processes. Its thread never runs other processes' continuations.
/// </summary>
public sealed class ThreadProcess : IProcess
{
    private readonly Action<CancellationToken> _body;

    /// <summary>Creates the process; <paramref name="maxStackSize"/> in bytes, 0 for the runtime's default.</summary>
    public ThreadProcess(Action<CancellationToken> body, int maxStackSize = 0)
    {
        ArgumentNullException.ThrowIfNull(body);
        ArgumentOutOfRangeException.ThrowIfNegative(maxStackSize);
        _body = body;
        MaxStackSize = maxStackSize;
    }

    /// <summary>The stack size of the thread, in bytes (0: the runtime's default).</summary>
    public int MaxStackSize { get; }

    /// <summary>The thread's priority (operating systems may ignore it for unprivileged processes).</summary>
    public ThreadPriority Priority { get; set; } = ThreadPriority.Normal;

    /// <summary>Starts the thread; the task ends when the body returns or throws.</summary>
    public Task RunAsync(CancellationToken cancellationToken)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(
            () =>
            {
                HandOff.MarkDedicatedThread();
                try
                {
                    _body(cancellationToken);
                    done.SetResult();
                }
                catch (OperationCanceledException ex) when (ex.CancellationToken == cancellationToken && cancellationToken.IsCancellationRequested)
                {
                    done.SetCanceled(cancellationToken);
                }
                catch (Exception ex)
                {
                    done.SetException(ex);
                }
            },
            MaxStackSize)
        {
            IsBackground = true,
            Name = "XCall.Channels process",
            Priority = Priority,
        };
        thread.Start();
        return done.Task;
    }
}
