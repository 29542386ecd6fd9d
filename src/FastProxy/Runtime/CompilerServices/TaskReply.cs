using System.Runtime.CompilerServices;

namespace XCall.Runtime.CompilerServices;

/// <summary>
/// The <see cref="Task{TResult}"/> of an async call: the only object a call allocates is that task (a caller may hold
/// a task for ever, so it cannot be pooled). The builder makes the task without a state machine.
/// </summary>
// Design:
// - The call's owner calls Start before the call is handed to a completer (PendingCall.AwaitCompletion, a full
//   fence), so the drainer that runs Complete sees the builder with its task and the read.
// - Complete copies both out and clears them before it gives the call back (PendingCall.End): from then on the
//   call, and this object with it, may be rented again by another thread, which calls Start again.
internal sealed class TaskReply<T> : AsyncReply
{
    private AsyncTaskMethodBuilder<T> _builder;
    private Func<PendingCall, T>? _read;

    /// <summary>The caller's task, which <see cref="Complete"/> completes with what <paramref name="read"/> reads.</summary>
    public Task<T> Start(Func<PendingCall, T> read)
    {
        _read = read;
        _builder = AsyncTaskMethodBuilder<T>.Create();
        return _builder.Task;
    }

    public override void Complete(PendingCall call)
    {
        AsyncTaskMethodBuilder<T> builder = _builder;
        Func<PendingCall, T> read = _read!;
        _builder = default;
        _read = null;
        T result;
        try
        {
            result = call.ReadReplyAndEnd(read);
        }
        catch (Exception error)
        {
            builder.SetException(error); // an OperationCanceledException makes the task cancelled, as an async method's would
            return;
        }
        builder.SetResult(result);
    }
}
