using System.Buffers;
using XCall.Marshal;
using XCall.Runtime;
using XCall.Transport;

namespace XCall;

/// <summary>
/// A channel that survives the loss of its link: when the underlying channel closes, calls in flight fail
/// with <see cref="XCallDisconnectedException"/> and the connection above stays open; the next call
/// reconnects, no sooner than the backoff (doubling from <see cref="RemoteOptions.ReconnectBackoff"/> up to
/// <see cref="RemoteOptions.MaxReconnectBackoff"/>) after a failed attempt.
/// </summary>
internal sealed class ReconnectingChannel : FrameChannel
{
    private readonly Func<CancellationToken, FrameChannel> _connect;
    private readonly RemoteOptions _options;
    private readonly object _lock = new();
    private readonly object _reconnectLock = new();
    private readonly string _endpoint;
    private FrameChannel? _inner;
    private FrameChannel? _sending;

    // The link this thread's open frame went to (the frame's commit or abort must reach that link, not one
    // another thread reconnected meanwhile: that one may hold another thread's half-written frame).
    [ThreadStatic]
    private static ReconnectingChannel? t_sendingOwner;
    [ThreadStatic]
    private static FrameChannel? t_sendingInner;
    private IFrameHandler? _handler;
    private TimeSpan _backoff;
    private long _nextAttempt;
    private bool _disposed;
    private Exception? _dropReason; // why DropLink closed the current link, for the loss it reports

    public ReconnectingChannel(FrameChannel first, Func<FrameChannel> connect, RemoteOptions options)
        : this(first, _ => connect(), options)
    {
    }

    /// <summary>
    /// Starts over <paramref name="first"/>; <paramref name="connect"/> makes each later link, and must give up
    /// when its token fires (the call that reconnects ran out of its timeout).
    /// </summary>
    public ReconnectingChannel(FrameChannel first, Func<CancellationToken, FrameChannel> connect, RemoteOptions options)
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

    /// <summary>Runs after a reconnect, before the call that triggered it proceeds (re-checks the contract).</summary>
    public Action? AfterReconnect { get; set; }

    public override void Start(IFrameHandler handler)
    {
        _handler = handler;
        FrameChannel inner = _inner!;
        inner.Start(new Link(this, inner, 0));
    }

    public override IBufferWriter<byte> BeginFrame(in FrameHeader header)
    {
        FrameChannel inner = Current();
        IBufferWriter<byte> output = inner.BeginFrame(header);
        _sending = inner; // the inner channel's send lock is held until Commit / Abort
        t_sendingOwner = this;
        t_sendingInner = inner;
        return output;
    }

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

    public override bool WaitForReply(PendingCall call, long deadline)
    {
        FrameChannel? inner = Volatile.Read(ref _inner);
        return inner is null ? call.Wait(deadline) : inner.WaitForReply(call, deadline);
    }

    /// <inheritdoc/>
    public override bool TryPollForReply(PendingCall call)
    {
        FrameChannel? inner = Volatile.Read(ref _inner);
        return inner is null ? call.IsCompleted : inner.TryPollForReply(call);
    }

    private FrameChannel Current()
    {
        FrameChannel? inner = Volatile.Read(ref _inner);
        return inner ?? Reconnect();
    }

    private FrameChannel Reconnect()
    {
        FrameChannel connected;
        // The call that reconnects keeps its timeout (SendDeadline, set around BeginFrame): for the wait
        // behind another thread's reconnect and for its own attempt.
        long deadline = SendDeadline;
        if (!Monitor.TryEnter(_reconnectLock, RemainingMs(deadline)))
        {
            throw new XCallTimeoutException(_endpoint, "another call was reconnecting for longer than this call's timeout");
        }
        try
        {
            if (Volatile.Read(ref _inner) is { } already)
            {
                return already;
            }
            if (_disposed)
            {
                throw new XCallDisconnectedException(_endpoint, "the connection is closed");
            }
            long wait = _nextAttempt - Environment.TickCount64;
            if (wait > 0)
            {
                throw new XCallDisconnectedException(_endpoint, $"reconnecting: the next attempt is in {wait} ms");
            }
            using CancellationTokenSource? timeout = deadline == 0 ? null : new CancellationTokenSource(RemainingMs(deadline));
            try
            {
                connected = _connect(timeout?.Token ?? CancellationToken.None);
            }
            catch (OperationCanceledException) when (timeout is { IsCancellationRequested: true })
            {
                throw new XCallTimeoutException(_endpoint, "reconnecting took longer than the call's timeout");
            }
            catch (Exception ex) when (ex is XCallException or System.Net.Sockets.SocketException or TimeoutException or IOException)
            {
                _nextAttempt = Environment.TickCount64 + (long)_backoff.TotalMilliseconds;
                _backoff = TimeSpan.FromTicks(Math.Min(_backoff.Ticks * 2, _options.MaxReconnectBackoff.Ticks));
                // The attempt's own disconnect already names the endpoint: keep only its reason.
                string reason = ex is XCallDisconnectedException lost ? lost.Reason : ex.Message;
                throw new XCallDisconnectedException(_endpoint, $"reconnect failed: {reason}", ex);
            }
            _backoff = _options.ReconnectBackoff;
            _nextAttempt = 0;
            int generation;
            lock (_lock)
            {
                // The generation counts up before any frame can go out on the new link (BeginFrame reads
                // _inner), so a sender that finds the new link also finds the new generation.
                generation = NextLinkGeneration();
                Volatile.Write(ref _inner, connected);
            }
            connected.Start(new Link(this, connected, generation));
        }
        finally
        {
            Monitor.Exit(_reconnectLock);
        }
        StateChanged?.Invoke(ConnectionState.Connected, null);
        AfterReconnect?.Invoke();
        return connected;
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
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }
            _disposed = true;
            inner = _inner;
        }
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
