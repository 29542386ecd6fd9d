using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using XCall.Marshal;
using XCall.Runtime;
using XCall.Transport;

namespace XCall;

/// <summary>
/// A channel that survives the loss of its link: when the underlying channel closes, calls in flight fail
/// with <see cref="XCallDisconnectedException"/> and the connection above stays open; the next call
/// reconnects, no sooner than the backoff (doubling from <see cref="RemoteOptions.ReconnectBackoff"/> up to
/// <see cref="RemoteOptions.MaxReconnectBackoff"/>) after a failed attempt. A synchronous call reconnects on
/// its own thread; an asynchronous one (<see cref="TryBeginFrame"/>, <see cref="ConnectAsync"/>) on the pool.
/// </summary>
/// <remarks>
/// Design: one attempt at a time, whoever makes it. <see cref="_attempt"/> (under <see cref="_lock"/>) is the
/// attempt under way: the caller that finds none and the link down creates it and makes the attempt (a
/// synchronous caller on its thread, bounded by its call's deadline; an asynchronous caller hands it to the
/// pool, bounded by the transport's connect timeout alone, since other callers may be waiting for it); every
/// other caller waits for its task, each until its own deadline or token. The new link is published
/// (<see cref="_inner"/>) and the attempt cleared under the lock before the link starts (a loss during the
/// re-check below starts a new attempt: the re-check's own Hello must not wait for the attempt it is part
/// of); the task completes after <see cref="AfterReconnect"/>, so a waiter's call follows the contract's
/// re-check, as the call of the caller that reconnected does. The task completes with null when its
/// synchronous maker ran out of time (the waiters try again, with their own time), and fails when the
/// connect failed (the backoff starts) or the channel was disposed.
/// </remarks>
internal sealed class ReconnectingChannel : FrameChannel
{
    private readonly Func<CancellationToken, Task<FrameChannel>> _connect;
    private readonly RemoteOptions _options;
    private readonly object _lock = new();
    private readonly string _endpoint;
    private readonly CancellationTokenSource _closing = new(); // ends an attempt on the pool when the channel is disposed
    private FrameChannel? _inner;
    private volatile bool _checking; // a new link is published, its contract not re-checked yet (see Install)
    private FrameChannel? _sending;

    // The link this thread's open frame went to (the frame's commit or abort must reach that link, not one
    // another thread reconnected meanwhile: that one may hold another thread's half-written frame).
    [ThreadStatic]
    private static ReconnectingChannel? t_sendingOwner;
    [ThreadStatic]
    private static FrameChannel? t_sendingInner;
    private IFrameHandler? _handler;
    private TaskCompletionSource<FrameChannel?>? _attempt;
    private TimeSpan _backoff;
    private long _nextAttempt;
    private bool _disposed;
    private Exception? _dropReason; // why DropLink closed the current link, for the loss it reports

    public ReconnectingChannel(FrameChannel first, Func<FrameChannel> connect, RemoteOptions options)
        : this(first, _ => Task.FromResult(connect()), options)
    {
    }

    /// <summary>
    /// Starts over <paramref name="first"/>; <paramref name="connect"/> makes each later link, and must give up
    /// when its token fires (the call that reconnects ran out of its timeout, or the channel was disposed).
    /// </summary>
    public ReconnectingChannel(FrameChannel first, Func<CancellationToken, Task<FrameChannel>> connect, RemoteOptions options)
    {
        _inner = first;
        _connect = connect;
        _options = options;
        _endpoint = first.RemoteEndpoint;
        _backoff = options.ReconnectBackoff;
    }

    public override string RemoteEndpoint => _endpoint;

    /// <summary>Raised on every change of the link, with the error that caused a loss.</summary>
    public event Action<ConnectionState, Exception?>? StateChanged;

    /// <summary>Runs after a reconnect a synchronous call made on its thread, before the calls waiting for it proceed (re-checks the contract).</summary>
    public Action? AfterReconnect { get; set; }

    /// <summary>
    /// <see cref="AfterReconnect"/> for a reconnect made in the background (on the pool, for an asynchronous call): awaited,
    /// so no pool thread waits for the peer's answer. Without it, the background reconnect runs <see cref="AfterReconnect"/>.
    /// </summary>
    public Func<Task>? AfterReconnectAsync { get; set; }

    public override void Start(IFrameHandler handler)
    {
        _handler = handler;
        FrameChannel inner = _inner!;
        inner.Start(new Link(this, inner, 0));
    }

    public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline) =>
        BeginOn(Usable(header) ?? Reconnect(deadline), header, deadline);

    /// <inheritdoc/>
    public override IBufferWriter<byte>? TryBeginFrame(in FrameHeader header, long deadline) =>
        Usable(header) is { } inner ? BeginOn(inner, header, deadline) : null;

    /// <summary>The link a frame of <paramref name="header"/>'s kind may go to now; null while there is none, and for a
    /// call while a new link's contract is re-checked (see <see cref="Install"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private FrameChannel? Usable(in FrameHeader header)
    {
        FrameChannel? inner = Volatile.Read(ref _inner);
        return _checking && header.Kind is FrameKind.Call or FrameKind.OneWay ? null : inner;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private IBufferWriter<byte> BeginOn(FrameChannel inner, in FrameHeader header, long deadline)
    {
        IBufferWriter<byte> output = inner.BeginFrame(header, deadline);
        _sending = inner; // the inner channel's send lock is held until Commit / Abort
        t_sendingOwner = this;
        t_sendingInner = inner;
        return output;
    }

    /// <inheritdoc/>
    /// <remarks>The frame goes to the link at hand in one call: no link to remember for a later commit.</remarks>
    public override void SendFrame(in FrameHeader header, ReadOnlySpan<byte> payload, long deadline) =>
        (Usable(header) ?? Reconnect(deadline)).SendFrame(header, payload, deadline);

    public override void CommitFrame() => TakeSending().CommitFrame();

    public override void CommitFrameBatched() => TakeSending().CommitFrameBatched();

    public override void AbortFrame() => TakeSending().AbortFrame();

    /// <summary>The link this thread's open frame went to.</summary>
    private FrameChannel TakeSending()
    {
        if (ReferenceEquals(t_sendingOwner, this))
        {
            t_sendingOwner = null;
            FrameChannel inner = t_sendingInner!;
            t_sendingInner = null;
            return inner;
        }
        // This thread opened a frame on another channel in between (a marshaller calling elsewhere): the
        // last link a frame went to.
        return _sending!;
    }

    /// <inheritdoc/>
    public override FrameChannel? LoanLink => Volatile.Read(ref _inner)?.LoanLink;

    public override bool WaitForReply(IReplyWait call, long deadline)
    {
        FrameChannel? inner = Volatile.Read(ref _inner);
        return inner is null ? call.Wait(deadline) : inner.WaitForReply(call, deadline);
    }

    /// <inheritdoc/>
    public override bool WaitReceiving(IReplyWait condition, long deadline)
    {
        FrameChannel? inner = Volatile.Read(ref _inner);
        return inner is null ? condition.Wait(deadline) : inner.WaitReceiving(condition, deadline);
    }

    /// <inheritdoc/>
    public override void LendReceiving() => Volatile.Read(ref _inner)?.LendReceiving();

    /// <inheritdoc/>
    public override bool MayAnswerInPlace => Volatile.Read(ref _inner) is { } inner && inner.MayAnswerInPlace;

    /// <inheritdoc/>
    public override bool TryPollForReply(IReplyWait call)
    {
        FrameChannel? inner = Volatile.Read(ref _inner);
        return inner is null ? call.IsCompleted : inner.TryPollForReply(call);
    }

    /// <summary>A synchronous call's reconnect, on its thread. The call keeps its send deadline for the wait behind
    /// another call's attempt and for its own.</summary>
    private FrameChannel Reconnect(long deadline)
    {
        while (true)
        {
            TaskCompletionSource<FrameChannel?>? attempt = JoinAttempt(out FrameChannel? current, out bool mine);
            if (attempt is null)
            {
                return current!;
            }
            if (mine)
            {
                return ConnectHere(attempt, deadline);
            }
            bool ended;
            try
            {
                ended = attempt.Task.Wait(Deadline.RemainingMs(deadline));
            }
            catch (AggregateException)
            {
                ended = true; // failed: thrown unwrapped below
            }
            if (!ended)
            {
                throw new XCallTimeoutException(_endpoint, "another call was reconnecting for longer than this call's timeout");
            }
            if (Outcome(attempt.Task) is { } connected)
            {
                return connected;
            }
            // Its maker ran out of time: try again, with this call's own.
        }
    }

    /// <inheritdoc/>
    public override async ValueTask ConnectAsync(long deadline, CancellationToken cancellationToken)
    {
        while (true)
        {
            TaskCompletionSource<FrameChannel?>? attempt = JoinAttempt(out _, out bool mine);
            if (attempt is null)
            {
                return;
            }
            if (mine)
            {
                // On the pool: not even the synchronous start of a connect (address checks, a socket) runs on the caller's thread.
                _ = Task.Run(() => ConnectInBackground(attempt));
            }
            try
            {
                await attempt.Task.WaitAsync(deadline == 0 ? Timeout.InfiniteTimeSpan : TimeSpan.FromMilliseconds(Deadline.RemainingMs(deadline)), cancellationToken)
                    .ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                // Only the wait times out: an attempt's own failures are XCallExceptions (see EndFailed).
                throw new XCallTimeoutException(_endpoint, "reconnecting took longer than the call's timeout");
            }
            catch (Exception) when (attempt.Task.IsCompleted && !attempt.Task.IsCompletedSuccessfully)
            {
                Outcome(attempt.Task); // throws the attempt's failure, as this caller's own exception
            }
            if (attempt.Task.Result is not null)
            {
                return;
            }
        }
    }

    /// <summary>
    /// The attempt to wait for: the one under way, or a new one that this caller makes (<paramref name="mine"/>);
    /// null with the link in <paramref name="current"/> when it is up.
    /// </summary>
    private TaskCompletionSource<FrameChannel?>? JoinAttempt(out FrameChannel? current, out bool mine)
    {
        lock (_lock)
        {
            mine = false;
            current = _inner;
            if (current is not null && !(_checking && _attempt is not null))
            {
                return null;
            }
            if (_disposed)
            {
                throw ClosedError();
            }
            if (_attempt is { } running)
            {
                return running;
            }
            long wait = _nextAttempt - Environment.TickCount64;
            if (wait > 0)
            {
                throw new XCallDisconnectedException(_endpoint, $"reconnecting: the next attempt is in {wait} ms");
            }
            mine = true;
            return _attempt = new TaskCompletionSource<FrameChannel?>(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }

    /// <summary>The link an ended attempt made (null: its maker ran out of time), or its failure thrown as the caller's own exception.</summary>
    private FrameChannel? Outcome(Task<FrameChannel?> attempt)
    {
        if (attempt.IsCompletedSuccessfully)
        {
            return attempt.Result;
        }
        Exception failure = attempt.Exception!.InnerException!;
        if (failure is XCallDisconnectedException lost)
        {
            // One instance thrown on many threads at once gets its stack trace overwritten by each of them.
            throw new XCallDisconnectedException(_endpoint, lost.Reason, lost.InnerException);
        }
        ExceptionDispatchInfo.Throw(failure);
        return null;
    }

    /// <summary>A synchronous caller's attempt, on its thread, bounded by its call's deadline.</summary>
    private FrameChannel ConnectHere(TaskCompletionSource<FrameChannel?> attempt, long deadline)
    {
        FrameChannel connected;
        using CancellationTokenSource? timeout = deadline == 0 ? null : new CancellationTokenSource(Deadline.RemainingMs(deadline));
        try
        {
            connected = _connect(timeout?.Token ?? CancellationToken.None).GetAwaiter().GetResult();
        }
        catch (OperationCanceledException) when (timeout is { IsCancellationRequested: true })
        {
            EndAttempt(attempt);
            attempt.TrySetResult(null); // the waiters try again, with their own time
            throw new XCallTimeoutException(_endpoint, "reconnecting took longer than the call's timeout");
        }
        catch (Exception ex)
        {
            Exception failure = EndFailed(attempt, ex);
            if (ReferenceEquals(failure, ex))
            {
                throw;
            }
            throw failure;
        }
        return Install(attempt, connected);
    }

    /// <summary>An asynchronous caller's attempt, on the pool, bounded by the transport's connect timeout (and ended by <see cref="Dispose"/>).</summary>
    private async Task ConnectInBackground(TaskCompletionSource<FrameChannel?> attempt)
    {
        FrameChannel connected;
        try
        {
            connected = await _connect(_closing.Token).ConfigureAwait(false);
        }
        catch (Exception ex)
        {
            EndFailed(attempt, ex);
            return;
        }
        try
        {
            StartLink(attempt, connected);
        }
        catch (Exception)
        {
            return; // the attempt's task carries it to the callers waiting for it
        }
        try
        {
            if (AfterReconnectAsync is { } check)
            {
                await check().ConfigureAwait(false);
            }
            else
            {
                AfterReconnect?.Invoke();
            }
        }
        catch (Exception ex)
        {
            FailChecking(attempt, ex);
            return;
        }
        Linked(attempt, connected);
    }

    /// <summary>What calls get once the channel is disposed.</summary>
    private XCallDisconnectedException ClosedError() => new(_endpoint, "the connection is closed");

    /// <summary>Clears the attempt under way if it is <paramref name="attempt"/>.</summary>
    private void EndAttempt(TaskCompletionSource<FrameChannel?> attempt)
    {
        lock (_lock)
        {
            ForgetAttemptUnsynchronized(attempt);
        }
    }

    /// <summary><see cref="EndAttempt"/> for a caller that holds <see cref="_lock"/>.</summary>
    private void ForgetAttemptUnsynchronized(TaskCompletionSource<FrameChannel?> attempt)
    {
        if (_attempt == attempt)
        {
            _attempt = null;
        }
    }

    /// <summary>Ends a failed attempt (a transport's failure starts the backoff) and returns what its callers throw.</summary>
    private Exception EndFailed(TaskCompletionSource<FrameChannel?> attempt, Exception ex)
    {
        Exception failure = ex;
        lock (_lock)
        {
            ForgetAttemptUnsynchronized(attempt);
            if (_disposed)
            {
                failure = ClosedError();
            }
            else if (ex is XCallException or System.Net.Sockets.SocketException or TimeoutException or IOException)
            {
                _nextAttempt = Environment.TickCount64 + (long)_backoff.TotalMilliseconds;
                _backoff = TimeSpan.FromTicks(Math.Min(_backoff.Ticks * 2, _options.MaxReconnectBackoff.Ticks));
                // The attempt's own disconnect already names the endpoint: keep only its reason.
                string reason = ex is XCallDisconnectedException lost ? lost.Reason : ex.Message;
                failure = new XCallDisconnectedException(_endpoint, $"reconnect failed: {reason}", ex);
            }
        }
        Fault(attempt, failure);
        return failure;
    }

    /// <summary>
    /// Fails an attempt for the callers waiting for it, and marks the failure observed: the caller that made the
    /// attempt throws it itself, and one that stopped waiting (its token, its timeout) does not look again, so a
    /// failure nobody else waited for would otherwise reach TaskScheduler.UnobservedTaskException.
    /// </summary>
    private static void Fault(TaskCompletionSource<FrameChannel?> attempt, Exception failure)
    {
        attempt.TrySetException(failure);
        _ = attempt.Task.Exception;
    }

    /// <summary>Makes <paramref name="connected"/> the link, re-checks the contract, and lets the attempt's waiters go.</summary>
    /// <remarks>
    /// The attempt stays the one to join, and calls keep off the new link (<see cref="_checking"/>), until the
    /// contract is re-checked (<see cref="AfterReconnect"/>: the Hello, which passes): the peer exposes the service
    /// only on a Hello, and a call that overtook it closed the new link as a call to an unknown object.
    /// </remarks>
    private FrameChannel Install(TaskCompletionSource<FrameChannel?> attempt, FrameChannel connected)
    {
        StartLink(attempt, connected);
        try
        {
            AfterReconnect?.Invoke();
        }
        catch (Exception ex)
        {
            FailChecking(attempt, ex);
            throw;
        }
        Linked(attempt, connected);
        return connected;
    }

    /// <summary>The first half of <see cref="Install"/>: makes <paramref name="connected"/> the link and starts it; calls keep off it until the check ends (<see cref="EndChecking"/>).</summary>
    private void StartLink(TaskCompletionSource<FrameChannel?> attempt, FrameChannel connected)
    {
        int generation = 0;
        bool disposed;
        lock (_lock)
        {
            disposed = _disposed;
            if (!disposed)
            {
                _backoff = _options.ReconnectBackoff;
                _nextAttempt = 0;
                // The generation counts up before any frame can go out on the new link (BeginFrame reads
                // _inner), so a sender that finds the new link also finds the new generation.
                generation = NextLinkGeneration();
                _checking = true;
                Volatile.Write(ref _inner, connected);
            }
            else
            {
                ForgetAttemptUnsynchronized(attempt);
            }
        }
        if (disposed)
        {
            connected.Dispose(); // made after the channel closed: nobody will use it
            throw FailClosed(attempt);
        }
        try
        {
            try
            {
                connected.Start(new Link(this, connected, generation));
            }
            catch (Exception) when (IsDisposedNow())
            {
                // Disposed between publishing the link and starting it: Dispose closed the link, which, never
                // started, reports no close of its own; the channel's handler learns it here, and callers get the
                // closed channel's error rather than what the closed link's Start threw.
                _handler?.OnClosed(null);
                throw FailClosed(attempt);
            }
            if (IsDisposedNow())
            {
                connected.Dispose(); // Dispose may have closed it before it started: closed again, its close reaches the handler
                throw FailClosed(attempt);
            }
            StateChanged?.Invoke(ConnectionState.Connected, null);
        }
        catch (Exception ex)
        {
            EndChecking(attempt);
            Fault(attempt, ex); // the waiters fail as the caller that made the attempt does (no-op if failed above)
            throw;
        }
    }

    /// <summary>The new link is checked: calls may use it, and the attempt's waiters get it.</summary>
    private void Linked(TaskCompletionSource<FrameChannel?> attempt, FrameChannel connected)
    {
        EndChecking(attempt);
        attempt.TrySetResult(connected);
    }

    /// <summary>The new link's check failed: its waiters fail with <paramref name="error"/>.</summary>
    private void FailChecking(TaskCompletionSource<FrameChannel?> attempt, Exception error)
    {
        EndChecking(attempt);
        Fault(attempt, error);
    }

    /// <summary>The new link is checked (or failed): calls may use it, and the attempt is no longer the one to join.</summary>
    private void EndChecking(TaskCompletionSource<FrameChannel?> attempt)
    {
        lock (_lock)
        {
            _checking = false;
            ForgetAttemptUnsynchronized(attempt);
        }
    }

    private bool IsDisposedNow()
    {
        lock (_lock)
        {
            return _disposed;
        }
    }

    /// <summary>Fails <paramref name="attempt"/>'s waiters with the closed channel's error, and returns it to throw.</summary>
    private Exception FailClosed(TaskCompletionSource<FrameChannel?> attempt)
    {
        Exception closed = ClosedError();
        Fault(attempt, closed);
        return closed;
    }

    private void OnInnerClosed(FrameChannel inner, int generation, Exception? error)
    {
        bool disposed;
        lock (_lock)
        {
            if (!ReferenceEquals(_inner, inner))
            {
                return; // an old link's late close
            }
            _inner = null;
            disposed = _disposed;
        }
        if (disposed)
        {
            _handler?.OnClosed(error);
            return;
        }
        var lost = error ?? Interlocked.Exchange(ref _dropReason, null) ?? new XCallDisconnectedException(_endpoint, "the server closed the connection");
        StateChanged?.Invoke(ConnectionState.Disconnected, lost);
        _handler?.OnLinkLost(lost, generation);
    }

    /// <inheritdoc/>
    public override bool DropLink(int linkGeneration, Exception error)
    {
        FrameChannel? inner;
        lock (_lock)
        {
            inner = LinkGeneration == linkGeneration ? _inner : null; // a link already replaced is gone anyway
            if (inner is not null)
            {
                _dropReason = error;
            }
        }
        inner?.Dispose(); // its close reaches OnInnerClosed: the link is lost, calls fail, the next one reconnects
        return true;
    }

    public override void Dispose()
    {
        FrameChannel? inner;
        TaskCompletionSource<FrameChannel?>? attempt;
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }
            _disposed = true;
            inner = _inner;
            attempt = _attempt;
            _attempt = null;
        }
        // Callers waiting for an attempt fail now, not when it ends; an attempt on the pool gives up.
        if (attempt is not null)
        {
            Fault(attempt, ClosedError());
        }
        _closing.Cancel();
        if (inner is null)
        {
            _handler?.OnClosed(null);
        }
        else
        {
            inner.Dispose();
        }
        StateChanged?.Invoke(ConnectionState.Closed, null);
    }

    /// <summary>Forwards one underlying channel's frames, and tells the wrapper when that channel closes.</summary>
    private sealed class Link(ReconnectingChannel owner, FrameChannel inner, int generation) : IFrameHandler
    {
        public MarshalLimits Limits => owner._handler!.Limits;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload) => owner._handler!.OnFrame(header, ref payload);

        public void OnClosed(Exception? error) => owner.OnInnerClosed(inner, generation, error);
    }
}
