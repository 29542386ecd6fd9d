using System.Runtime.CompilerServices;

namespace XCall.Runtime.CompilerServices;

/// <summary>
/// The <see cref="Task{TResult}"/> of an async call: the only objects a call allocates are that task and, where the
/// call completes on the thread that received its reply, the task's source (a caller may hold a task for ever, so
/// neither can be pooled). No state machine.
/// </summary>
// Design:
// - The call's owner calls Start before the call is handed to a completer (PendingCall.AwaitCompletion, a full
//   fence), so the completer that runs Complete sees the task's maker and the read.
// - Complete copies both out and clears them before it gives the call back (PendingCall.End): from then on the
//   call, and this object with it, may be rented again by another thread, which calls Start again.
// - A task made with completesWhereReplied is completed by whichever thread completes the call (the receiving
//   thread, a close), not by the drainer: its source runs continuations asynchronously (the runtime queues them to
//   the thread pool), so no continuation ever runs on that thread, and a task nobody awaits yet costs no hand-off.
//   Any other task is completed by the drainer, whose thread runs the continuation inline (AsyncTaskMethodBuilder).
internal sealed class TaskReply<T> : AsyncReply
{
    private AsyncTaskMethodBuilder<T> _builder;
    private TaskCompletionSource<T>? _source;
    private Func<PendingCall, T>? _read;

    public override bool CompletesWhereReplied => _source is not null;

    /// <summary>The caller's task, which <see cref="Complete"/> completes with what <paramref name="read"/> reads.</summary>
    public Task<T> Start(Func<PendingCall, T> read, bool completesWhereReplied)
    {
        _read = read;
        if (completesWhereReplied)
        {
            _source = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
            return _source.Task;
        }
        _builder = AsyncTaskMethodBuilder<T>.Create();
        return _builder.Task;
    }

    public override void Complete(PendingCall call)
    {
        AsyncTaskMethodBuilder<T> builder = _builder;
        TaskCompletionSource<T>? source = _source;
        Func<PendingCall, T> read = _read!;
        _builder = default;
        _source = null;
        _read = null;
        T result;
        try
        {
            result = call.ReadReplyAndEnd(read);
        }
        catch (Exception error)
        {
            // An OperationCanceledException makes the task cancelled, as an async method's would.
            if (source is null)
            {
                builder.SetException(error);
            }
            else if (error is OperationCanceledException cancelled)
            {
                source.TrySetCanceled(cancelled.CancellationToken);
            }
            else
            {
                source.TrySetException(error);
            }
            return;
        }
        if (source is null)
        {
            builder.SetResult(result);
        }
        else
        {
            source.TrySetResult(result);
        }
    }
}
