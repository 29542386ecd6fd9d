using System.Threading.Tasks.Sources;

namespace XCall.Runtime.CompilerServices;

/// <summary>
/// The <see cref="ValueTask{TResult}"/> (or <see cref="ValueTask"/>) of an async call: its source is the pooled call's
/// own completion, so a call allocates nothing. The caller's <c>GetResult</c> reads the reply and gives the call back.
/// </summary>
// Design:
// - The source's token is the call's ManualResetValueTaskSourceCore version, which PendingCall.Prepare moves on at
//   every use: an await of an earlier use's value task (the call since reused) fails the core's token check.
// - _read is set by the call's owner before the call is handed to a completer (Start, then AwaitCompletion, a full
//   fence) and taken by the one GetResult that reads the reply: a second GetResult of the same use (before the call
//   is reused) finds it null and throws, as a consumed value task must.
// - Complete (the drainer) only completes the core, which runs the awaiting continuation: that continuation's
//   GetResult gives the call back.
internal sealed class ValueReply<T> : AsyncReply, IValueTaskSource<T>, IValueTaskSource
{
    private readonly PendingCall _call;
    private Func<PendingCall, T>? _read;

    public ValueReply(PendingCall call) => _call = call;

    /// <summary>Sets what the caller's <c>GetResult</c> reads; the value task is <c>new(this, call's version)</c>.</summary>
    public void Start(Func<PendingCall, T> read) => _read = read;

    /// <summary>The call completed before the caller awaited it: the read set by <see cref="Start"/> is not wanted.</summary>
    public void Clear() => _read = null;

    public override void Complete(PendingCall call) => call.CompleteSource();

    public T GetResult(short token)
    {
        _call.GetSourceResult(token); // throws for the token of an earlier use
        Func<PendingCall, T> read = _read ?? throw new InvalidOperationException("The call's value task was awaited twice.");
        _read = null;
        return _call.ReadReplyAndEnd(read);
    }

    void IValueTaskSource.GetResult(short token) => GetResult(token);

    public ValueTaskSourceStatus GetStatus(short token) => _call.GetSourceStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _call.OnSourceCompleted(continuation, state, token, flags);
}
