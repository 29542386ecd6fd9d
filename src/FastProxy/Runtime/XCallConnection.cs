using System.Buffers;
using System.Buffers.Binary;
using System.ComponentModel;
using System.Runtime.CompilerServices;
using XCall.Marshal;
using XCall.Transport;

namespace XCall.Runtime;

/// <summary>
/// The call runtime over one <see cref="FrameChannel"/>, the same for every transport and for both sides:
/// it sends calls and pairs replies with them (client), and dispatches received calls to the objects it
/// exposes (server). Calls may flow in both directions on one connection.
/// </summary>
public sealed partial class XCallConnection : IFrameHandler, IDisposable
{
    private readonly object _callLock = new();
    private PendingCall?[] _slots = new PendingCall?[16];
    private readonly Stack<int> _freeSlots = new();
    private int _slotCount;
    private readonly PendingCall _spareCall; // slot 0 (see RentCall)
    private int _spareCallTaken;
    private int _asyncInFlight;
    private ulong _lastAsyncCallId;

    private readonly object _objectLock = new();
    // Read without a lock on every call (copy on write: services are exposed rarely, looked up per call).
    private volatile Dictionary<ulong, ExposedObject> _objects = new();
    private volatile ExposedObject? _root;

    private readonly object _serverLock = new();
    private readonly Stack<ServerCall> _serverCallPool = new();
    private readonly Dictionary<ulong, ServerCall> _inflight = new();
    private readonly ServerCall _spareServerCall; // see RentServerCall
    private int _spareServerCallTaken;

    private Exception? _closeReason;
    private int _closed;

    /// <summary>Creates the runtime over <paramref name="channel"/>; call <see cref="Start"/> to begin receiving.</summary>
    /// <exception cref="ArgumentOutOfRangeException">A bound of <paramref name="options"/> is out of its range.</exception>
    public XCallConnection(FrameChannel channel, ConnectionOptions? options = null)
    {
        Channel = channel;
        Options = options ?? ConnectionOptions.Default;
        Options.Validate();
        _spareCall = new PendingCall(0, this);
        _slots[0] = _spareCall;
        _slotCount = 1;
        _spareServerCall = new ServerCall(this);
        // The call timeout bounds the sending of a call's frame too (0: no bound, the default).
        TimeSpan timeout = Options.CallTimeout;
        _sendTimeoutMs = timeout == Timeout.InfiniteTimeSpan ? 0 : Math.Max(1, (long)timeout.TotalMilliseconds);
    }

    private readonly long _sendTimeoutMs;

    /// <summary>The transport connection.</summary>
    public FrameChannel Channel { get; }

    /// <summary>This connection's settings.</summary>
    public ConnectionOptions Options { get; }

    /// <summary>The peer's address.</summary>
    public string RemoteEndpoint => Channel.RemoteEndpoint;

    /// <summary>True once the connection is closed; every call then fails with <see cref="XCallDisconnectedException"/>.</summary>
    public bool IsClosed => Volatile.Read(ref _closed) != 0;

    /// <summary>Raised once when the connection closes, with the reason (null after an orderly close).</summary>
    public event Action<XCallConnection, Exception?>? Closed;

    MarshalLimits IFrameHandler.Limits => Options.Limits;

    /// <summary>Starts receiving frames.</summary>
    public void Start() => Channel.Start(this);

    /// <summary>Exposes <paramref name="target"/> as the connection's root object (object id 0).</summary>
    public void ExposeRoot(object target, Dispatcher dispatcher)
    {
        lock (_objectLock)
        {
            _root = new ExposedObject(target, dispatcher);
        }
    }

    /// <summary>Exposes <paramref name="target"/> under <paramref name="objectId"/>.</summary>
    public void Expose(ulong objectId, object target, Dispatcher dispatcher)
    {
        lock (_objectLock)
        {
            _objects = new Dictionary<ulong, ExposedObject>(_objects) { [objectId] = new ExposedObject(target, dispatcher) };
        }
    }

    /// <summary>The services this side offers to a peer that asks for them by contract (server side).</summary>
    public ServiceTable? Services { get; init; }

    /// <summary>
    /// Asks the peer for its service of contract <typeparamref name="T"/> and returns a proxy to it. The
    /// peer checks the protocol version and the contract hash; a mismatch fails here with a message naming
    /// the interface and both hashes.
    /// </summary>
    /// <exception cref="XCallException">The peer has no such service, or its contract differs.</exception>
    public T GetService<T>() where T : class => GetProxy<T>(FindService<T>(Options.CallTimeout));

    /// <summary>
    /// Asks the peer for its service of contract <typeparamref name="T"/>, as <see cref="GetService{T}"/> does, and
    /// returns the object id the peer exposes it under (for <see cref="GetProxy{T}"/>), waiting at most
    /// <paramref name="timeout"/> for the answer: a transport bounds it by its connect timeout too, so a peer that
    /// accepted the connection and never answers holds nobody for ever when calls have no timeout.
    /// </summary>
    /// <exception cref="XCallException">The peer has no such service, or its contract differs.</exception>
    /// <exception cref="XCallTimeoutException">No answer within <paramref name="timeout"/>.</exception>
    public ulong FindService<T>(TimeSpan timeout) where T : class
    {
        Contract<T> contract = ContractRegistry.Get<T>();
        return Hello(contract.Name, contract.Hash, timeout);
    }

    /// <summary>Sends a Hello for a contract and returns the object id the peer exposed it under.</summary>
    internal ulong Hello(string contractName, ulong contractHash, TimeSpan timeout)
    {
        if (NestingCallId() == OnReceivingThread)
        {
            ThrowWaitOnReceivingThread();
        }
        PendingCall call = RentCall(0, isAsync: false);
        try
        {
            var writer = new MarshalWriter(Channel.BeginFrame(new FrameHeader(FrameKind.Hello, call.CallId, 0, 0)));
            try
            {
                writer.WriteString(contractName);
                writer.Write(contractHash);
                writer.Flush();
            }
            catch
            {
                Channel.AbortFrame();
                throw;
            }
            SendAndWait(call, timeout, timeout == Timeout.InfiniteTimeSpan ? long.MaxValue : Environment.TickCount64 + (long)timeout.TotalMilliseconds);
            MarshalReader reply;
            try
            {
                reply = call.GetReplyReader();
            }
            catch (RemoteInvocationException ex)
            {
                throw new XCallException($"{RemoteEndpoint} refused {contractName}: {ex.RemoteMessage}");
            }
            ulong objectId = reply.Read<ulong>();
            reply.EnsureFullyConsumed();
            return objectId;
        }
        finally
        {
            ReturnCall(call);
        }
    }

    /// <summary>Asynchronous <see cref="GetService{T}"/>.</summary>
    public Task<T> GetServiceAsync<T>(CancellationToken cancellationToken = default) where T : class =>
        Task.Run(GetService<T>, cancellationToken);

    /// <summary>Creates a proxy of contract <typeparamref name="T"/> for the peer's object <paramref name="objectId"/>.</summary>
    public T GetProxy<T>(ulong objectId = 0) where T : class => ContractRegistry.Get<T>().CreateProxy(this, objectId);

    // ---------------------------------------------------------------- client side (called by generated proxies)

    /// <summary>Begins a call frame and registers the pending call; the payload goes into the returned output.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public IBufferWriter<byte> BeginCall(ProxyBase proxy, uint methodId, bool isAsync, out PendingCall call) =>
        BeginCallFrame(proxy.ObjectId, methodId, isAsync, mayDefer: false, out call, proxy)!;

    /// <summary>Begins a call frame to object <paramref name="objectId"/> without a proxy.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public IBufferWriter<byte> BeginCall(ulong objectId, uint methodId, bool isAsync, out PendingCall call, ProxyBase? proxy = null) =>
        BeginCallFrame(objectId, methodId, isAsync, mayDefer: false, out call, proxy)!;

    /// <summary>
    /// Begins an async call's frame as <see cref="BeginCall(ProxyBase, uint, bool, out PendingCall)"/> does, unless
    /// the channel lost its link and would make a new one first (a reconnecting channel): then null, with nothing
    /// rented or begun. The proxy then returns a task that awaits <see cref="ReconnectAsync"/> and makes the call
    /// again, so the caller's thread never waits for a connect.
    /// </summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public IBufferWriter<byte>? BeginAsyncCall(ProxyBase proxy, uint methodId, out PendingCall call) =>
        BeginCallFrame(proxy.ObjectId, methodId, isAsync: true, mayDefer: true, out call, proxy);

    /// <summary>
    /// For an async call that <see cref="BeginAsyncCall"/> found without a link: completes once the channel has one
    /// again (it joins the reconnect under way or starts one, off the caller's thread), then the proxy makes the
    /// call. The call's token and its timeout (<see cref="ConnectionOptions.CallTimeout"/>, from now) end the wait,
    /// as they end a synchronous call's reconnect.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    /// <exception cref="XCallTimeoutException">The call timeout passed first.</exception>
    /// <exception cref="XCallDisconnectedException">The reconnect failed or waits out its backoff, or the connection is closed.</exception>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public ValueTask<long> ReconnectAsync(CancellationToken cancellationToken)
    {
        if (IsClosed)
        {
            ThrowClosed();
        }
        cancellationToken.ThrowIfCancellationRequested(); // a call cancelled before it is made starts no reconnect
        long deadline = CallDeadline(isAsync: true); // the deadline of the call that waits, if it began before (a second loss)
        ValueTask connect = Channel.ConnectAsync(deadline, cancellationToken);
        return connect.IsCompletedSuccessfully ? new ValueTask<long>(deadline) : AfterConnect(connect, deadline);

        static async ValueTask<long> AfterConnect(ValueTask connect, long deadline)
        {
            await connect.ConfigureAwait(false);
            return deadline;
        }
    }

    /// <summary>
    /// The proxy makes again, on this thread, the call that waited for <see cref="ReconnectAsync"/>: that call keeps
    /// <paramref name="deadline"/> (what <see cref="ReconnectAsync"/> returned), so the call timeout bounds the
    /// reconnect and the call together. Taken by the next call this thread begins on this connection.
    /// </summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public void ContinueCall(long deadline)
    {
        t_continued = this;
        t_continuedDeadline = deadline;
    }

    [ThreadStatic]
    private static XCallConnection? t_continued;

    [ThreadStatic]
    private static long t_continuedDeadline;

    /// <summary>The deadline of a call that begins now: the one <see cref="ContinueCall"/> left for it, or the call timeout from now (0: none).</summary>
    private long CallDeadline(bool isAsync)
    {
        if (isAsync && t_continued is not null)
        {
            bool mine = ReferenceEquals(t_continued, this);
            t_continued = null;
            if (mine)
            {
                return t_continuedDeadline;
            }
        }
        return NewDeadline();
    }

    private long NewDeadline() => _sendTimeoutMs == 0 ? 0 : Environment.TickCount64 + _sendTimeoutMs;

    private IBufferWriter<byte>? BeginCallFrame(ulong objectId, uint methodId, bool isAsync, bool mayDefer, out PendingCall call, ProxyBase? proxy)
    {
        long deadline = CallDeadline(isAsync); // first: a deadline left by ContinueCall is this call's, even if it fails here
        ThrowIfUnusableReference(proxy);
        ulong parentCallId = isAsync ? 0 : NestingCallId();
        if (parentCallId == OnReceivingThread)
        {
            ThrowWaitOnReceivingThread();
        }
        call = RentCall(methodId, isAsync);
        call.Proxy = proxy;
        call.StartTimestamp = Diagnostics.CallTelemetry.Start();
        call.Deadline = deadline;
        try
        {
            // CallerWaits only where the link lends: the flag tells the transport it may, and older peers refuse it.
            bool lends = !isAsync && Channel.LoanLink is not null;
            ushort flags = (ushort)((parentCallId == 0 ? 0 : FrameFlags.Nested) | (lends ? FrameFlags.CallerWaits : 0));
            IBufferWriter<byte>? output = BeginBoundedFrame(new FrameHeader(FrameKind.Call, call.CallId, objectId, methodId, flags), mayDefer, deadline);
            if (output is null)
            {
                if (mayDefer && _sendTimeoutMs != 0)
                {
                    ContinueCall(deadline); // the reconnect this call now waits for (ReconnectAsync, next on this thread) keeps its deadline
                }
                ReturnCall(call);
                call = null!;
                return null;
            }
            call.Link = Channel.LinkGeneration;
            call.LoanLink = lends ? Channel.LoanLink : null; // the link the frame is open on (a reconnect may have made a new one)
            if (proxy?.Reference is not null)
            {
                CheckLinkOrAbort(proxy);
            }
            if (parentCallId != 0)
            {
                BinaryPrimitives.WriteUInt64LittleEndian(output.GetSpan(sizeof(ulong)), parentCallId);
                output.Advance(sizeof(ulong));
            }
            return output;
        }
        catch
        {
            ReturnCall(call);
            throw;
        }
    }

    /// <summary>Drops a call whose arguments failed to marshal.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public void AbortCall(PendingCall call)
    {
        try
        {
            DropOpenFrame();
        }
        finally
        {
            ReturnCall(call);
        }
    }

    /// <summary>Publishes the call frame and waits for the reply (sync methods). Throws on timeout or disconnect.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public void SendAndWait(PendingCall call) => SendAndWait(call, Options.CallTimeout, call.Deadline == 0 ? long.MaxValue : call.Deadline);

    /// <summary>Publishes the call frame and waits for the reply until <paramref name="deadline"/> (a <see cref="Environment.TickCount64"/>;
    /// <see cref="long.MaxValue"/>: for ever); <paramref name="timeout"/> is what a timeout reports.</summary>
    private void SendAndWait(PendingCall call, TimeSpan timeout, long deadline)
    {
        if (call.CancelledBeforeSend)
        {
            // The token was cancelled before anything was sent: drop the frame, fail the call here.
            DropOpenFrame();
            call.CompleteWithFailure(call.CallId, new OperationCanceledException(call.CancelledToken));
            call.CancelledToken = default; // the pooled call does not keep the caller's token source alive
            return;
        }
        if (call.StartTimestamp != 0)
        {
            call.SentTimestamp = System.Diagnostics.Stopwatch.GetTimestamp();
        }
        SendOpenFrame();
        if (call.IsCompleted)
        {
            call.EndNested();
            return;
        }
        try
        {
            // A wait also ends for a call nested in this one (a callback this call caused): it runs here, on the
            // caller's thread, which has nothing else to do, and the wait goes on.
            while (true)
            {
                bool inTime = Channel.WaitForReply(call, deadline);
                if (call.TakeNested() is { } nested)
                {
                    RunNested(nested);
                    continue;
                }
                if (call.IsCompleted)
                {
                    break;
                }
                if (!inTime || (deadline != long.MaxValue && Environment.TickCount64 >= deadline))
                {
                    TimeOut(call, timeout);
                    break;
                }
            }
        }
        finally
        {
            if (!call.IsCompleted)
            {
                // The wait ended by an exception: claim the call, so no nested call is offered to it any more.
                call.CompleteWithFailure(call.CallId, new XCallDisconnectedException(RemoteEndpoint, "the caller stopped waiting"));
            }
            call.EndNested();
            if (call.LoanLink is { } loans && call.Failed)
            {
                // No reply (or an error): the arrays the frame lent come back to the caller only once the peer cannot read them.
                loans.TakeBackLoans(call.CallId);
            }
        }
    }

    /// <summary>
    /// Runs a call nested in the caller's call on the caller's thread, as the pool would run it: with no
    /// synchronization context (an async callback's continuation must not be posted to a thread that waits),
    /// and with the caller's execution context restored afterwards (what the callback sets stays in it).
    /// The callback does see the caller's async-local values, as a local callback would.
    /// </summary>
    private static void RunNested(IThreadPoolWorkItem nested)
    {
        SynchronizationContext? context = SynchronizationContext.Current;
        ExecutionContext? execution = ExecutionContext.Capture();
        SynchronizationContext.SetSynchronizationContext(null);
        try
        {
            nested.Execute();
        }
        finally
        {
            if (execution is not null)
            {
                ExecutionContext.Restore(execution);
            }
            SynchronizationContext.SetSynchronizationContext(context);
        }
    }

    /// <summary>
    /// Publishes the call frame and waits asynchronously for the reply (async methods). A pipelined call (the
    /// async call before it still in flight) lets the transport batch its frame with the ones that follow; any
    /// other goes at once and may poll for its reply on this thread.
    /// </summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public ValueTask SendAsync(PendingCall call, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            // Cancelled before anything was sent: drop the frame, as a sync call does, and fail the call here.
            DropOpenFrame();
            call.CompleteWithFailure(call.CallId, new OperationCanceledException(cancellationToken));
            return default;
        }
        if (call.StartTimestamp != 0)
        {
            call.SentTimestamp = System.Diagnostics.Stopwatch.GetTimestamp();
        }
        SendOpenFrame(batched: call.Pipelined);
        if (call.IsCompleted || (!call.Pipelined && Channel.TryPollForReply(call)))
        {
            return default;
        }
        TimeSpan timeout = Options.CallTimeout;
        if (!cancellationToken.CanBeCanceled && call.Deadline == 0)
        {
            return call.AsValueTask();
        }
        return WaitWithCancellation(call, cancellationToken, timeout);
    }

    private async ValueTask WaitWithCancellation(PendingCall call, CancellationToken cancellationToken, TimeSpan timeout)
    {
        // What is left of the call's deadline: a call made again after a reconnect has spent part of it already.
        using var timeoutCts = call.Deadline == 0 ? null : new CancellationTokenSource(TimeSpan.FromMilliseconds(Math.Max(0, call.Deadline - Environment.TickCount64)));
        using CancellationTokenRegistration userReg = cancellationToken.UnsafeRegister(static (s, ct) =>
        {
            var (conn, c) = ((XCallConnection, PendingCall))s!;
            conn.CancelPending(c, new OperationCanceledException(ct));
        }, (this, call));
        using CancellationTokenRegistration timeoutReg = timeoutCts is null ? default : timeoutCts.Token.UnsafeRegister(static s =>
        {
            var (conn, c, t) = ((XCallConnection, PendingCall, TimeSpan))s!;
            conn.CancelPending(c, new XCallTimeoutException(conn.RemoteEndpoint, MethodName(c), t));
        }, (this, call, timeout));
        await call.AsValueTask().ConfigureAwait(false);
    }

    /// <summary>Sends a cancel frame for <paramref name="call"/> and fails it locally.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public void CancelPending(PendingCall call, Exception reason)
    {
        ulong id = call.CallId;
        uint methodId = call.MethodId;
        int link = call.Link;
        if (call.CompleteWithFailure(id, reason))
        {
            // To the link the call went out on, or nowhere: a cancel never reconnects on the cancelling thread.
            TrySendControl(FrameKind.Cancel, id, 0, methodId, link);
        }
    }

    /// <summary>The call's method as a user reads it (<c>ICalc.Add</c>), or its id without a proxy.</summary>
    internal static string MethodName(PendingCall call) =>
        call.Proxy is { } proxy ? $"{proxy.Contract.ContractName}.{proxy.Contract.GetMethodName(call.MethodId)}" : $"0x{call.MethodId:x8}";

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void TimeOut(PendingCall call, TimeSpan timeout)
    {
        var error = new XCallTimeoutException(RemoteEndpoint, MethodName(call), timeout);
        CancelPending(call, error);
        // The reply may have raced in; whichever completed the call wins, and the reader reports it. If the
        // reply won, it may still be copying: wait for it to finish before the reply is read.
        SpinWait.SpinUntil(() => call.IsCompleted);
    }

    /// <summary>Registers a cancellation token for a sync call in flight: cancelling sends a cancel frame.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public CancellationTokenRegistration RegisterCancellation(PendingCall call, CancellationToken cancellationToken)
    {
        if (!cancellationToken.CanBeCanceled)
        {
            return default;
        }
        if (cancellationToken.IsCancellationRequested)
        {
            // Registering would run the callback here, on the thread whose call frame is still open.
            call.CancelledBeforeSend = true;
            call.CancelledToken = cancellationToken;
            return default;
        }
        return cancellationToken.UnsafeRegister(static (s, ct) =>
        {
            var (conn, c) = ((XCallConnection, PendingCall))s!;
            conn.CancelPending(c, new OperationCanceledException(ct));
        }, (this, call));
    }

    /// <summary>
    /// The reply of <paramref name="call"/> could not be read (generated proxies call this from an exception
    /// filter): a malformed frame ends its link, as one the receiving side cannot read does: a reconnecting
    /// channel drops that link and reconnects on the next call, any other channel closes with its
    /// connection. Returns false, so the filter lets the <see cref="XCallProtocolException"/> reach the
    /// caller unchanged; never throws (an exception in a filter would be lost, and with it the close).
    /// </summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public bool CloseOnMalformedReply(PendingCall call, XCallProtocolException error)
    {
        try
        {
            if (!Channel.DropLink(call.Link, error))
            {
                try
                {
                    Close(error);
                }
                finally
                {
                    Channel.Dispose();
                }
            }
        }
        catch (Exception)
        {
            // A Closed handler or the transport threw: the close itself has happened.
        }
        return false;
    }

    /// <summary>Returns a finished call to the pool.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public void EndCall(PendingCall call)
    {
        try
        {
            if (call.StartTimestamp != 0 && call.Proxy is { } proxy)
            {
                ReportClientCall(call, proxy);
            }
        }
        finally
        {
            ReturnCall(call);
        }
    }

    private void ReportClientCall(PendingCall call, ProxyBase proxy)
    {
        long end = System.Diagnostics.Stopwatch.GetTimestamp();
        long replied = call.ReplyTimestamp != 0 ? call.ReplyTimestamp : end;
        long sent = call.SentTimestamp != 0 ? call.SentTimestamp : replied;
        Diagnostics.CallTelemetry.Record(
            proxy.Contract.ContractName,
            proxy.Contract.GetMethodName(call.MethodId),
            "client",
            RemoteEndpoint,
            call.RequestBytes,
            call.ReplyLength,
            Diagnostics.CallTelemetry.Nanoseconds(call.StartTimestamp, sent) + Diagnostics.CallTelemetry.Nanoseconds(replied, end),
            Diagnostics.CallTelemetry.Nanoseconds(sent, replied),
            0,
            call.Failed);
    }

    /// <summary>Begins a one-way call frame through <paramref name="proxy"/>; publish it with <see cref="EndOneWay"/>.</summary>
    /// <exception cref="ObjectDisposedException">The proxy is a reference that was released.</exception>
    /// <exception cref="XCallDisconnectedException">The connection is gone, or the proxy is a reference that came over a lost link.</exception>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public IBufferWriter<byte> BeginOneWay(ProxyBase proxy, uint methodId)
    {
        ThrowIfUnusableReference(proxy);
        IBufferWriter<byte> output = BeginBoundedFrame(new FrameHeader(FrameKind.OneWay, 0, proxy.ObjectId, methodId))!;
        if (proxy.Reference is not null)
        {
            CheckLinkOrAbort(proxy);
        }
        return output;
    }

    /// <summary>Begins a one-way call frame to object <paramref name="objectId"/> without a proxy.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public IBufferWriter<byte> BeginOneWay(ulong objectId, uint methodId) =>
        BeginBoundedFrame(new FrameHeader(FrameKind.OneWay, 0, objectId, methodId))!;

    /// <summary>
    /// Begins a call's frame with the call timeout as the transport's send deadline;
    /// <paramref name="mayDefer"/>: through <see cref="FrameChannel.TryBeginFrame"/>, null when the link is down.
    /// </summary>
    private IBufferWriter<byte>? BeginBoundedFrame(in FrameHeader header, bool mayDefer = false, long deadline = -1)
    {
        long sendDeadline = _sendTimeoutMs == 0 ? 0 : deadline > 0 ? deadline : NewDeadline();
        return mayDefer ? Channel.TryBeginFrame(header, sendDeadline) : Channel.BeginFrame(header, sendDeadline);
    }

    /// <summary>Publishes a one-way call frame.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public void EndOneWay() => SendOpenFrame();

    /// <summary>Drops a one-way call frame whose arguments failed to marshal.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public void AbortOneWay() => DropOpenFrame();

    // The spare call makes a thread's back-to-back calls cost one interlocked exchange of an int to rent and a
    // plain store to return (an interlocked exchange of an object field is a call into the runtime, with a write
    // barrier); the free list under the lock serves calls in flight at the same time.
    private PendingCall RentCall(uint methodId, bool isAsync)
    {
        PendingCall call = Interlocked.Exchange(ref _spareCallTaken, 1) == 0 ? _spareCall : RentSlot();
        call.Prepare(methodId, isAsync);
        if (isAsync)
        {
            // Pipelined: the caller went on without awaiting the async call made just before this one. Counting
            // the calls in flight alone would also mark every call made while one long call waits (a watch,
            // a wait for an event), which then lose the caller's own poll for their reply.
            // No call has id 0. FindCall checks the id and then the state without a lock: a slot reused in between
            // can only make the guess wrong (batch or poll), never the call.
            ulong previous = Interlocked.Exchange(ref _lastAsyncCallId, call.CallId);
            call.Pipelined = Interlocked.Increment(ref _asyncInFlight) > 1 && previous != 0 && FindCall(previous) is { IsCompleted: false };
        }
        else
        {
            call.Pipelined = false;
        }
        // Publishing the call id (Prepare) and then reading _closed needs no fence here: Close sets _closed and
        // then runs a process-wide barrier before it fails the calls it finds, so a call is either refused here
        // or failed there (an asymmetric Dekker pair: the rare side pays).
        if (Volatile.Read(ref _closed) != 0)
        {
            ReturnCall(call);
            ThrowClosed();
        }
        return call;
    }

    private PendingCall RentSlot()
    {
        lock (_callLock)
        {
            if (_freeSlots.TryPop(out int slot))
            {
                return _slots[slot]!;
            }
            slot = _slotCount++;
            if (slot == _slots.Length)
            {
                PendingCall?[] grown = new PendingCall?[_slots.Length * 2];
                _slots.CopyTo(grown);
                Volatile.Write(ref _slots, grown);
            }
            var call = new PendingCall(slot, this);
            Volatile.Write(ref _slots[slot], call);
            return call;
        }
    }

    private void ReturnCall(PendingCall call)
    {
        if (call.IsAsync)
        {
            Interlocked.Decrement(ref _asyncInFlight);
        }
        call.CallId = 0;
        call.LoanLink = null;
        if (ReferenceEquals(call, _spareCall))
        {
            Volatile.Write(ref _spareCallTaken, 0); // after the call's last use: the next renter sees it whole
            return;
        }
        lock (_callLock)
        {
            _freeSlots.Push(call.Slot);
        }
    }

    private PendingCall? FindCall(ulong callId)
    {
        int slot = (int)(uint)callId;
        PendingCall?[] slots = Volatile.Read(ref _slots);
        if ((uint)slot < (uint)slots.Length && slots[slot] is { } call && call.CallId == callId)
        {
            return call;
        }
        return null;
    }

    /// <summary>Before a frame is begun: a reference proxy that was disposed, or came over a link already lost, fails here.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ThrowIfUnusableReference(ProxyBase? proxy)
    {
        if (proxy?.Reference is { } reference && (reference.Released || reference.Link <= _lostLink))
        {
            ThrowReleasedOrLost(proxy);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowReleasedOrLost(ProxyBase proxy) =>
        throw (proxy.Reference!.Released ? Released(proxy) : ReferenceLost(proxy));

    /// <summary>The failure of a call on (or a send of) a reference proxy that was disposed.</summary>
    internal static ObjectDisposedException Released(ProxyBase proxy) =>
        new(proxy.Contract.ContractName, $"The reference to object {proxy.ObjectId} of the peer was released (disposed).");

    /// <summary>The failure of a call on (or a send of) a reference proxy that came over a link that was lost.</summary>
    internal XCallDisconnectedException ReferenceLost(ProxyBase proxy) =>
        new(RemoteEndpoint,
            $"the reference to object {proxy.ObjectId} ({proxy.Contract.ContractName}) came over a link that was lost; " +
            "references do not survive a reconnect: get the object again from the service");

    /// <summary>
    /// With the frame begun (so the link it goes on is settled): a reference received over an earlier link
    /// names nothing, or another object, on this one. The frame is dropped and the call fails.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void CheckLinkOrAbort(ProxyBase proxy)
    {
        int link = Channel.LinkGeneration;
        if (proxy.Reference!.Link == link)
        {
            return;
        }
        Channel.AbortFrame();
        throw ReferenceLost(proxy);
    }

    /// <summary>
    /// A synchronous call on this connection from a call that runs on the thread receiving its frames (inline
    /// dispatch, or a one-way call past the connection's bounds): that thread would wait for a reply only it could read.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowWaitOnReceivingThread()
    {
        (string call, string fix) = Options.DispatchMode == DispatchMode.Inline
            ? ("A call dispatched inline (ConnectionOptions.DispatchMode = Inline) runs", "or serve the contract with DispatchMode.Concurrent")
            : ("A one-way call past ConnectionOptions.MaxConcurrentCalls = " + Options.MaxConcurrentCalls + " or MaxConcurrentArgumentBytes = " + Options.MaxConcurrentArgumentBytes + " runs",
               "or raise the limits");
        throw new XCallException(
            $"{call} on the thread that receives the frames of the connection to {RemoteEndpoint}, and cannot make a synchronous call on " +
            $"that connection: its reply could only be read by this thread. Make the call asynchronous, {fix}.");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowClosed() =>
        throw new XCallDisconnectedException(RemoteEndpoint, _closeReason?.Message ?? "the connection is closed", _closeReason);

    /// <summary>Sends a frame without payload; with <paramref name="link"/> >= 0, only over that link (see <see cref="FrameChannel.LinkGeneration"/>).</summary>
    private void TrySendControl(FrameKind kind, ulong callId, ulong objectId, uint methodId, int link = -1)
    {
        if (IsClosed)
        {
            return;
        }
        try
        {
            var header = new FrameHeader(kind, callId, objectId, methodId);
            if (link < 0)
            {
                Channel.BeginFrame(header);
            }
            else if (BeginFrameOnLink(header, link) is null)
            {
                return; // about an object of a lost link: no frame, so no reconnect for it either
            }
            Channel.CommitFrame();
        }
        catch (XCallDisconnectedException)
        {
            // Nothing to tell a peer that is gone.
        }
        catch (InvalidOperationException)
        {
            // This thread has a frame open (a token cancelled on the calling thread while its call was being
            // written): the call already failed here; its frame still goes out, without a cancel after it.
        }
        catch (Exception)
        {
            // A control frame is advice to the peer (cancel, release, pong): it runs from timer and token
            // callbacks and finalizer work items, where an exception would end the process. A channel that
            // cannot send it (a reconnect refused, say) fails the next real call instead.
        }
    }

    // ---------------------------------------------------------------- receive side

    void IFrameHandler.OnFrame(in FrameHeader header, ref MarshalReader payload)
    {
        if (header.Version != FrameHeader.CurrentVersion)
        {
            throw new XCallProtocolException($"Frame version {header.Version} is not supported (this build speaks {FrameHeader.CurrentVersion}).");
        }
        if (header.Flags != 0 && (header.Kind != FrameKind.Call || (header.Flags & ~(FrameFlags.Nested | FrameFlags.CallerWaits)) != 0))
        {
            throw new XCallProtocolException($"Frame flags 0x{header.Flags:x4} are not valid on a {header.Kind} frame.");
        }
        switch (header.Kind)
        {
            case FrameKind.Reply:
            case FrameKind.Error:
                FindCall(header.CallId)?.CompleteWithReply(header, ref payload);
                break;
            case FrameKind.Call:
            case FrameKind.OneWay:
                OnCall(header, ref payload);
                break;
            case FrameKind.Cancel:
                ServerCall? target;
                lock (_serverLock)
                {
                    _inflight.TryGetValue(header.CallId, out target);
                }
                target?.RequestCancel();
                break;
            case FrameKind.Ping:
                TrySendControl(FrameKind.Pong, header.CallId, 0, 0, Channel.LinkGeneration); // on this link or none: never a reconnect
                break;
            case FrameKind.Hello:
                OnHello(header, ref payload);
                break;
            case FrameKind.Release:
                OnRelease(header);
                break;
            case FrameKind.Pong:
            case FrameKind.Goodbye:
                break;
            default:
                throw new XCallProtocolException($"Unknown frame kind {(byte)header.Kind}.");
        }
    }

    void IFrameHandler.OnClosed(Exception? error) => Close(error);

    /// <summary>Closes the connection: pending calls fail with <see cref="XCallDisconnectedException"/>.</summary>
    public void Dispose()
    {
        Close(null);
        Channel.Dispose();
    }

    void IFrameHandler.OnLinkLost(Exception error, int linkGeneration)
    {
        DropReferences(linkGeneration);
        PendingCall?[] slots;
        lock (_callLock)
        {
            slots = _slots;
        }
        FailCalls(slots, error as XCallDisconnectedException ?? new XCallDisconnectedException(RemoteEndpoint, error.Message, error));
        LinkLost?.Invoke(this, error);
    }

    /// <summary>Raised when a reconnecting channel lost its link: calls in flight failed, later calls reconnect.</summary>
    public event Action<XCallConnection, Exception>? LinkLost;

    private void FailCalls(PendingCall?[] slots, XCallDisconnectedException failure)
    {
        foreach (PendingCall? call in slots)
        {
            if (call is not null)
            {
                call.CompleteWithFailure(call.CallId, failure.Copy());
            }
        }
        ServerCall[] inflight;
        lock (_serverLock)
        {
            inflight = [.. _inflight.Values];
        }
        foreach (ServerCall call in inflight)
        {
            call.RequestCancel();
        }
    }

    private void Close(Exception? error)
    {
        PendingCall?[] slots;
        lock (_callLock)
        {
            // Under the lock, so a call is either refused by RentCall or seen here.
            if (_closed != 0)
            {
                return;
            }
            _closeReason = error;
            Interlocked.Exchange(ref _closed, 1);
            slots = _slots;
        }
        // Every thread's call id published before it could see _closed is visible after this (see RentCall).
        Interlocked.MemoryBarrierProcessWide();
        // A transport's own disconnect already names the endpoint and the reason: pass it through unwrapped.
        FailCalls(slots, error as XCallDisconnectedException ?? new XCallDisconnectedException(RemoteEndpoint, error?.Message ?? "the connection was closed", error));
        DropReferences();
        Closed?.Invoke(this, error);
    }

    private sealed record ExposedObject(object Target, Dispatcher Dispatcher);
}
