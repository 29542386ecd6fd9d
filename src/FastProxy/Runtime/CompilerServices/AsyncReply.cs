namespace XCall.Runtime.CompilerServices;

/// <summary>
/// The typed end of an async call made without a state machine (<see cref="PendingCall.SendForTask{T}"/> and
/// friends): reads the reply into the task the caller holds once the call completes. One per pooled
/// <see cref="PendingCall"/> and result type, reused by its later calls.
/// </summary>
internal abstract class AsyncReply
{
    /// <summary>A read for methods without a result: the reply must be empty (or the remote error it carries is thrown).</summary>
    internal static readonly Func<PendingCall, bool> EndVoid = static call =>
    {
        call.EndVoidReply();
        return true;
    };

    /// <summary>
    /// True when the thread that completes the call (the one that read its reply, a close) completes the caller's
    /// task at once, with no drainer: the task then runs no continuation on that thread (see <see cref="TaskReply{T}"/>).
    /// </summary>
    public virtual bool CompletesWhereReplied => false;

    /// <summary>
    /// <paramref name="call"/> completed and the caller awaits it: from the connection's drainer (or the completer, see
    /// <see cref="CompletesWhereReplied"/>), completes the caller's
    /// task (and so runs its continuation on this thread). The call is given back before that continuation runs.
    /// </summary>
    public abstract void Complete(PendingCall call);
}
