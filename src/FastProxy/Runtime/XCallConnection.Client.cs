using System.Buffers;
using System.Buffers.Binary;
using System.ComponentModel;
using XCall.Marshal;
using XCall.Runtime.CompilerServices;
using XCall.Transport;

namespace XCall.Runtime;

// The client side: calls made through generated proxies, from the frame begun to the call returned.
public sealed partial class XCallConnection
{
    /// <summary>Begins a synchronous call through <paramref name="proxy"/>: its frame is open for the arguments.</summary>
    internal PendingCall BeginCall(ProxyBase proxy, uint methodId, bool cancellable = true) =>
        BeginCallFrame(proxy.ObjectId, methodId, isAsync: false, mayDefer: false, proxy, cancellable, longWait: false)!;

    /// <summary>
    /// Begins a call of method <paramref name="methodId"/> on the peer's object <paramref name="objectId"/> without a
    /// proxy (a test's or a tool's raw call); the call then goes as a proxy's does (see <see cref="PendingCall"/>).
    /// </summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public PendingCall BeginCall(ulong objectId, uint methodId, bool isAsync) =>
        BeginCallFrame(objectId, methodId, isAsync, mayDefer: false, proxy: null, cancellable: true, longWait: false)!;

    /// <summary>
    /// Begins an async call as <see cref="BeginCall(ProxyBase, uint, bool)"/> does, unless the channel lost its link and
    /// would make a new one first (a reconnecting channel): then null, with nothing rented or begun. The proxy
    /// then returns a task that awaits <see cref="ReconnectAsync"/> and makes the call again, so the caller's
    /// thread never waits for a connect.
    /// </summary>
    internal PendingCall? BeginAsyncCall(ProxyBase proxy, uint methodId, bool cancellable = true, bool longWait = false) =>
        BeginCallFrame(proxy.ObjectId, methodId, isAsync: true, mayDefer: true, proxy, cancellable, longWait);

    /// <summary>
    /// For an async call that <see cref="BeginAsyncCall"/> found without a link: completes once the channel has one
    /// again (it joins the reconnect under way or starts one, off the caller's thread), then the proxy makes the
    /// call. The call's token and its timeout (<see cref="ConnectionOptions.CallTimeout"/>, from now) end the wait,
    /// as they end a synchronous call's reconnect.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    /// <exception cref="XCallTimeoutException">The call timeout passed first.</exception>
    /// <exception cref="XCallDisconnectedException">The reconnect failed or waits out its backoff, or the connection is closed.</exception>
    internal ValueTask<long> ReconnectAsync(CancellationToken cancellationToken)
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
    internal void ContinueCall(long deadline)
    {
        t_continued = this;
        t_continuedDeadline = deadline;
        s_continuing = true;
    }

    // True once any thread left a deadline with ContinueCall (a reconnect): until then an async call does not look at
    // its thread's slot (a thread-static read per call). A thread that set its slot saw its own write of this flag;
    // others may see it late, which only costs them the read.
    private static bool s_continuing;

    [ThreadStatic]
    private static XCallConnection? t_continued;

    [ThreadStatic]
    private static long t_continuedDeadline;

    /// <summary>The deadline of a call that begins now: the one <see cref="ContinueCall"/> left for it, or the call timeout from now (0: none).</summary>
    private long CallDeadline(bool isAsync)
    {
        if (isAsync && s_continuing && t_continued is not null)
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

    /// <summary>Begins a call's frame; <paramref name="cancellable"/>: the caller's token can be cancelled (a call that
    /// cannot be, and runs no timeout, is marked <see cref="FrameFlags.Uncancellable"/>: no cancel frame follows it);
    /// <paramref name="longWait"/>: an async call nobody polls for (<see cref="FrameFlags.LongWait"/>).</summary>
    private PendingCall? BeginCallFrame(ulong objectId, uint methodId, bool isAsync, bool mayDefer, ProxyBase? proxy, bool cancellable, bool longWait)
    {
        long deadline = CallDeadline(isAsync); // first: a deadline left by ContinueCall is this call's, even if it fails here
        ThrowIfUnusableReference(proxy);
        ulong parentCallId = isAsync ? 0 : NestingCallId();
        if (parentCallId == OnReceivingThread)
        {
            ThrowWaitOnReceivingThread();
        }
        PendingCall call = RentCall(methodId, isAsync, longWait);
        call.Proxy = proxy;
        call.StartTimestamp = Diagnostics.CallTelemetry.Start();
        call.Deadline = deadline;
        try
        {
            // CallerWaits only where the link lends: the flag tells the transport it may, and older peers refuse it.
            bool lends = !isAsync && Channel.LoanLink is not null;
            ushort flags = (ushort)((parentCallId == 0 ? 0 : FrameFlags.Nested) | (lends ? FrameFlags.CallerWaits : 0)
                | (cancellable || deadline != 0 ? 0 : FrameFlags.Uncancellable) | (longWait ? FrameFlags.LongWait : 0));
            IBufferWriter<byte>? output = BeginBoundedFrame(new FrameHeader(FrameKind.Call, call.CallId, objectId, methodId, flags), mayDefer, deadline);
            if (output is null)
            {
                if (mayDefer && _sendTimeoutMs != 0)
                {
                    ContinueCall(deadline); // the reconnect this call now waits for (ReconnectAsync, next on this thread) keeps its deadline
                }
                ReturnCall(call);
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
            call.Opened(output);
            return call;
        }
        catch
        {
            ReturnCall(call);
            throw;
        }
    }

    /// <summary>Publishes the call frame and waits for the reply (sync methods). Throws on timeout or disconnect.</summary>
    internal void SendAndWait(PendingCall call) => SendAndWait(call, Options.CallTimeout, call.Deadline == 0 ? long.MaxValue : call.Deadline);

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
        CompletionDrain.BeforeBlockingWait(); // a continuation run by a drainer waits here: the calls behind it go on
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
        PoolLikeRun run = PoolLikeRun.Enter();
        try
        {
            nested.Execute();
        }
        finally
        {
            run.Leave();
        }
    }

    /// <summary>
    /// A call run on a thread of the caller's as the pool would run it (<see cref="RunNested"/>, <see cref="RunInWait"/>):
    /// with no synchronization context, and with the thread's execution context restored afterwards. Each step is a lookup
    /// of the thread's statics (on Linux a call to __tls_get_addr), so the synchronization context is set and restored only
    /// where the thread has one.
    /// </summary>
    private readonly struct PoolLikeRun
    {
        private readonly SynchronizationContext? _context;
        private readonly ExecutionContext? _execution;

        private PoolLikeRun(SynchronizationContext? context, ExecutionContext? execution)
        {
            _context = context;
            _execution = execution;
        }

        public static PoolLikeRun Enter()
        {
            SynchronizationContext? context = SynchronizationContext.Current;
            if (context is not null)
            {
                SynchronizationContext.SetSynchronizationContext(null);
            }
            return new PoolLikeRun(context, ExecutionContext.Capture());
        }

        public void Leave()
        {
            if (_execution is not null)
            {
                ExecutionContext.Restore(_execution);
            }
            if (_context is not null)
            {
                SynchronizationContext.SetSynchronizationContext(_context);
            }
        }
    }

    /// <summary>
    /// Publishes the call frame and waits asynchronously for the reply (async methods). A pipelined call (the
    /// async call before it still in flight) lets the transport batch its frame with the ones that follow; any
    /// other goes at once and may poll for its reply on this thread.
    /// </summary>
    internal ValueTask SendAsync(PendingCall call, CancellationToken cancellationToken) => SendAsync(call, cancellationToken, Options.CallTimeout);

    /// <summary><see cref="SendAsync(PendingCall, CancellationToken)"/> for a call whose deadline was set from <paramref name="timeout"/> (which its timeout's message names).</summary>
    internal ValueTask SendAsync(PendingCall call, CancellationToken cancellationToken, TimeSpan timeout)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            // Cancelled before anything was sent: drop the frame, as a sync call does, and fail the call here.
            DropOpenFrame();
            call.CompleteWithFailure(call.CallId, new OperationCanceledException(cancellationToken));
            return default;
        }
        if (!SendUnlessCompleted(call) || !call.AwaitCompletion())
        {
            return default; // completed here: no drainer completes its source, and the caller may reuse the call at once
        }
        if (!cancellationToken.CanBeCanceled && call.Deadline == 0)
        {
            return call.AsValueTask();
        }
        return WaitWithCancellation(call, cancellationToken, timeout);
    }

    /// <summary>
    /// <see cref="SendAsync(PendingCall, CancellationToken)"/> for a call that can be neither cancelled nor time out, whose caller's task
    /// <paramref name="reply"/> completes: true when a drainer will complete it, false when the call completed here.
    /// </summary>
    internal bool SendAwaited(PendingCall call, AsyncReply reply) => SendUnlessCompleted(call) && call.AwaitWith(reply);

    /// <summary>Publishes an async call's frame (and polls for its reply unless pipelined or a long wait): false when it completed here.</summary>
    private bool SendUnlessCompleted(PendingCall call)
    {
        if (call.StartTimestamp != 0)
        {
            call.SentTimestamp = System.Diagnostics.Stopwatch.GetTimestamp();
        }
        SendOpenFrame(batched: call.Pipelined);
        return !call.IsCompleted && (call.Pipelined || call.LongWait || !Channel.TryPollForReply(call));
    }

    /// <summary>
    /// The reply of <paramref name="call"/> could not be read (from an exception filter, see
    /// <see cref="PendingCall.CloseOnMalformedReply"/>): a malformed frame ends its link, as one the receiving side
    /// cannot read does: a reconnecting channel drops that link and reconnects on the next call, any other channel
    /// closes with its connection. Never throws (an exception in a filter would be lost, and with it the close).
    /// </summary>
    internal void CloseOnMalformedReply(PendingCall call, XCallProtocolException error)
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
    }

    /// <summary>Returns a finished call to the pool, reporting it to telemetry when it was <paramref name="sent"/>.</summary>
    internal void EndCall(PendingCall call, bool sent)
    {
        try
        {
            if (sent && call.StartTimestamp != 0 && call.Proxy is { } proxy)
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
            proxy.Dispatcher.ContractName,
            proxy.Dispatcher.GetMethodName(call.MethodId),
            "client",
            RemoteEndpoint,
            call.RequestBytes,
            call.ReplyLength,
            Diagnostics.CallTelemetry.Nanoseconds(call.StartTimestamp, sent) + Diagnostics.CallTelemetry.Nanoseconds(replied, end),
            Diagnostics.CallTelemetry.Nanoseconds(sent, replied),
            0,
            call.Failed);
    }

    /// <summary>Begins a one-way call frame through <paramref name="proxy"/>.</summary>
    /// <exception cref="ObjectDisposedException">The proxy is a reference that was released.</exception>
    /// <exception cref="XCallDisconnectedException">The connection is gone, or the proxy is a reference that came over a lost link.</exception>
    internal OneWayCall BeginOneWay(ProxyBase proxy, uint methodId)
    {
        ThrowIfUnusableReference(proxy);
        IBufferWriter<byte> output = BeginBoundedFrame(new FrameHeader(FrameKind.OneWay, 0, proxy.ObjectId, methodId))!;
        if (proxy.Reference is not null)
        {
            CheckLinkOrAbort(proxy);
        }
        return new OneWayCall(this, output);
    }

    /// <summary>
    /// Sends a one-way call through <paramref name="proxy"/> whose <paramref name="arguments"/> are written already
    /// (unmanaged values on the proxy's stack): one call into the transport, no frame left open on the thread. A proxy
    /// that is a reference goes through <see cref="BeginOneWay"/>, whose frame is checked against the link the
    /// reference came over before it is sent.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The proxy is a reference that was released.</exception>
    /// <exception cref="XCallDisconnectedException">The connection is gone, or the proxy is a reference that came over a lost link.</exception>
    internal void SendOneWay(ProxyBase proxy, uint methodId, ReadOnlySpan<byte> arguments)
    {
        if (proxy.Reference is not null)
        {
            OneWayCall call = BeginOneWay(proxy, methodId);
            try
            {
                MarshalWriter writer = call.Arguments();
                writer.WriteBlock(arguments);
                writer.Flush();
            }
            catch
            {
                call.Abort();
                throw;
            }
            call.Send();
            return;
        }
        ThrowIfUnusableReference(proxy);
        long sendDeadline = _sendTimeoutMs == 0 ? 0 : NewDeadline();
        Channel.SendFrame(new FrameHeader(FrameKind.OneWay, 0, proxy.ObjectId, methodId), arguments, sendDeadline);
    }

    /// <summary>
    /// Begins a call's frame with the call timeout as the transport's send deadline;
    /// <paramref name="mayDefer"/>: through <see cref="FrameChannel.TryBeginFrame"/>, null when the link is down.
    /// </summary>
    private IBufferWriter<byte>? BeginBoundedFrame(in FrameHeader header, bool mayDefer = false, long deadline = -1)
    {
        long sendDeadline = _sendTimeoutMs == 0 ? 0 : deadline > 0 ? deadline : NewDeadline();
        return mayDefer ? Channel.TryBeginFrame(header, sendDeadline) : Channel.BeginFrame(header, sendDeadline);
    }


    private PendingCall RentCall(uint methodId, bool isAsync, bool longWait = false)
    {
        PendingCall call = _calls.Rent(methodId, isAsync, longWait);
        if (_calls.IsClosed)
        {
            ReturnCall(call);
            ThrowClosed();
        }
        return call;
    }

    private void ReturnCall(PendingCall call) => _calls.Return(call);

    private PendingCall? FindCall(ulong callId) => _calls.Find(callId);
}
