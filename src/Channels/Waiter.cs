using System.Threading.Tasks.Sources;

namespace XCall.Channels;

/// <summary>
/// A pending read or write on a <see cref="ChannelCore{T}"/>: the awaitable a waiting process
/// holds, pooled by its channel, with a version token that catches stale awaits.
/// </summary>
/// <remarks>
/// The channel's lock guards <see cref="Queued"/>, <see cref="Prev"/>, <see cref="Next"/> and
/// <see cref="Item"/> while the waiter is queued. Whoever unlinks it under that lock (a peer, a
/// cancellation, poison) owns its one completion, so a waiter is completed exactly once.
/// </remarks>
internal sealed class Waiter<T> : IValueTaskSource<T>, IValueTaskSource, IHandOffTarget
{
    private readonly ChannelCore<T> _owner;
    private ManualResetValueTaskSourceCore<T> _core;
    private T _result = default!;

    internal Waiter(ChannelCore<T> owner) => _owner = owner;

    internal Waiter<T>? Prev;
    internal Waiter<T>? Next;
    internal bool Queued;

    /// <summary>The value a writer offers.</summary>
    internal T Item = default!;

    /// <summary>A reader in extended rendezvous: the writer that serves it waits for EndRead.</summary>
    internal bool Extended;

    internal CancellationTokenRegistration Registration;

    internal short Version => _core.Version;

    internal ValueTask<T> AsValueTask() => new(this, _core.Version);

    internal ValueTask AsWriteTask() => new(this, _core.Version);

    internal void Succeed(T item)
    {
        _result = item;
        HandOff.Complete(this);
    }

    /// <summary>Failures (poison, cancellation, completion) go through the pool: they often come in bulk from one thread.</summary>
    internal void Fail(Exception error)
    {
        _core.RunContinuationsAsynchronously = true;
        _core.SetException(error);
    }

    void IHandOffTarget.Complete(bool runContinuationAsynchronously)
    {
        _core.RunContinuationsAsynchronously = runContinuationAsynchronously;
        T result = _result;
        _result = default!;
        _core.SetResult(result);
    }

    /// <summary>Watches <paramref name="token"/> while the waiter is queued.</summary>
    internal void WatchCancellation(CancellationToken token)
    {
        if (token.CanBeCanceled)
        {
            Registration = token.UnsafeRegister(static (s, t) => ((Waiter<T>)s!)._owner.CancelWaiter((Waiter<T>)s!, t), this);
        }
    }

    public T GetResult(short token)
    {
        try
        {
            return _core.GetResult(token);
        }
        finally
        {
            Recycle();
        }
    }

    void IValueTaskSource.GetResult(short token)
    {
        try
        {
            _core.GetResult(token);
        }
        finally
        {
            Recycle();
        }
    }

    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);

    private void Recycle()
    {
        // Dispose (not Unregister) waits for a callback that is running on another thread, so no
        // late cancellation can reach this waiter once it serves another operation.
        Registration.Dispose();
        Registration = default;
        Item = default!;
        Extended = false;
        _core.Reset();
        _owner.Return(this);
    }
}
