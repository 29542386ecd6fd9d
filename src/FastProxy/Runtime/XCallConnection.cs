using XCall.Marshal;
using XCall.Runtime.CompilerServices;
using XCall.Transport;

namespace XCall.Runtime;

/// <summary>
/// The call runtime over one <see cref="FrameChannel"/>, the same for every transport and for both sides:
/// it sends calls and pairs replies with them (client), and dispatches received calls to the objects it
/// exposes (server). Calls may flow in both directions on one connection.
/// </summary>
/// <remarks>
/// The connection routes frames between its parts, each of which owns one job and its own lock:
/// <see cref="CallTable"/> (the calls this side sent, and whether the connection is closed),
/// <see cref="ServerCallTable"/> and <see cref="Admission"/> (the calls it received, and the room they take),
/// <see cref="ReferenceTable"/> (the objects it serves and holds by reference). The client path is in
/// XCallConnection.Client.cs, the server path in XCallConnection.Dispatch.cs, the links and references in
/// XCallConnection.References.cs.
/// </remarks>
public sealed partial class XCallConnection : IFrameHandler, IDisposable
{
    private readonly CallTable _calls;
    private readonly ServerCallTable _serverCalls;
    private readonly Admission _admission;
    private readonly ReferenceTable _references;

    /// <summary>Where async calls' continuations run: a thread-pool drainer per burst of completions, not per call.</summary>
    internal CompletionDrain Completions { get; } = new();

    /// <summary>Creates the runtime over <paramref name="channel"/>; call <see cref="Start"/> to begin receiving.</summary>
    /// <exception cref="ArgumentOutOfRangeException">A bound of <paramref name="options"/> is out of its range.</exception>
    public XCallConnection(FrameChannel channel, ConnectionOptions? options = null)
    {
        Channel = channel;
        Options = options ?? ConnectionOptions.Default;
        Options.Validate();
        _calls = new CallTable(this);
        _serverCalls = new ServerCallTable(this);
        _admission = new Admission(Options);
        _references = new ReferenceTable(this);
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
    public bool IsClosed => _calls.IsClosed;

    /// <summary>Tests: every call object of the connection's table (a call given back has id 0).</summary>
    internal PendingCall?[] CallSlots => _calls.Snapshot();

    /// <summary>Raised once when the connection closes, with the reason (null after an orderly close).</summary>
    public event Action<XCallConnection, Exception?>? Closed;

    MarshalLimits IFrameHandler.Limits => Options.Limits;

    /// <summary>Starts receiving frames.</summary>
    public void Start() => Channel.Start(this);

    /// <summary>Exposes <paramref name="target"/> as the connection's root object (object id 0).</summary>
    public void ExposeRoot(object target, Dispatcher dispatcher) => _references.ExposeRoot(target, dispatcher);

    /// <summary>Exposes <paramref name="target"/> under <paramref name="objectId"/>.</summary>
    public void Expose(ulong objectId, object target, Dispatcher dispatcher) => _references.Expose(objectId, target, dispatcher);

    /// <summary>The services this side offers to a peer that asks for them by contract (server side).</summary>
    public ServiceTable? Services { get; init; }

    /// <summary>
    /// Asks the peer for its service of contract <typeparamref name="T"/> and returns a proxy to it. The
    /// peer checks the protocol version and the contract hash; a mismatch fails here with a message naming
    /// the interface and both hashes.
    /// </summary>
    /// <exception cref="XCallException">The peer has no such service, or its contract differs.</exception>
    public T GetService<T>() where T : class => GetProxy<T>(GetServiceObjectId<T>(Options.CallTimeout));

    /// <summary>
    /// Asks the peer for its service of contract <typeparamref name="T"/>, as <see cref="GetService{T}"/> does, and
    /// returns the object id the peer exposes it under (for <see cref="GetProxy{T}"/>), waiting at most
    /// <paramref name="timeout"/> for the answer: a transport bounds it by its connect timeout too, so a peer that
    /// accepted the connection and never answers holds nobody for ever when calls have no timeout.
    /// </summary>
    /// <exception cref="XCallException">The peer has no such service, or its contract differs.</exception>
    /// <exception cref="XCallTimeoutException">No answer within <paramref name="timeout"/>.</exception>
    public ulong GetServiceObjectId<T>(TimeSpan timeout) where T : class
    {
        Contract<T> contract = ContractRegistry.Get<T>();
        return Hello(contract.Name, contract.Hash, timeout);
    }

    /// <summary>
    /// Asynchronous <see cref="GetServiceObjectId{T}"/>: no thread waits for the answer, so openings on pool threads
    /// never hold the pool while the peers that must answer them wait for a pool thread themselves.
    /// </summary>
    /// <exception cref="XCallException">The peer has no such service, or its contract differs.</exception>
    /// <exception cref="XCallTimeoutException">No answer within <paramref name="timeout"/>.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    public async Task<ulong> GetServiceObjectIdAsync<T>(TimeSpan timeout, CancellationToken cancellationToken = default) where T : class =>
        await HelloAsync(ContractRegistry.Get<T>(), timeout == Timeout.InfiniteTimeSpan ? 0 : Environment.TickCount64 + (long)timeout.TotalMilliseconds, timeout, cancellationToken).ConfigureAwait(false);

    /// <summary>Sends a Hello for <paramref name="contract"/> as an async call ending at <paramref name="deadline"/> (0: none; its timeout's message names <paramref name="timeout"/>) and returns the object id the peer exposed it under.</summary>
    private async Task<ulong> HelloAsync<T>(Contract<T> contract, long deadline, TimeSpan timeout, CancellationToken cancellationToken) where T : class
    {
        PendingCall call = RentCall(0, isAsync: true);
        try
        {
            call.Deadline = deadline;
            WriteHello(call, contract.Name, contract.Hash);
            await SendAsync(call, cancellationToken, timeout).ConfigureAwait(false);
            return ReadHelloReply(call, contract.Name);
        }
        finally
        {
            ReturnCall(call);
        }
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
            WriteHello(call, contractName, contractHash);
            SendAndWait(call, timeout, timeout == Timeout.InfiniteTimeSpan ? long.MaxValue : Environment.TickCount64 + (long)timeout.TotalMilliseconds);
            return ReadHelloReply(call, contractName);
        }
        finally
        {
            ReturnCall(call);
        }
    }

    /// <summary>
    /// Asynchronous <see cref="GetService{T}"/>: the Hello goes out on this thread and its answer is awaited, bounded
    /// by the call timeout and <paramref name="cancellationToken"/>.
    /// </summary>
    /// <exception cref="XCallException">The peer has no such service, or its contract differs.</exception>
    /// <exception cref="XCallTimeoutException">No answer within the call timeout.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    public async Task<T> GetServiceAsync<T>(CancellationToken cancellationToken = default) where T : class =>
        GetProxy<T>(await HelloAsync(ContractRegistry.Get<T>(), NewDeadline(), Options.CallTimeout, cancellationToken).ConfigureAwait(false));

    private void WriteHello(PendingCall call, string contractName, ulong contractHash)
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
    }

    private ulong ReadHelloReply(PendingCall call, string contractName)
    {
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

    /// <summary>Creates a proxy of contract <typeparamref name="T"/> for the peer's object <paramref name="objectId"/>.</summary>
    public T GetProxy<T>(ulong objectId = 0) where T : class => ContractRegistry.Get<T>().CreateProxy(this, objectId);

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

    /// <summary>The flags a frame of <paramref name="kind"/> may carry: a call's, and the <see cref="FrameFlags.LongWait"/> its answer echoes.</summary>
    private static int ValidFlags(FrameKind kind) => kind switch
    {
        FrameKind.Call => FrameFlags.Nested | FrameFlags.CallerWaits | FrameFlags.Uncancellable | FrameFlags.LongWait,
        FrameKind.Reply or FrameKind.Error => FrameFlags.LongWait,
        _ => 0,
    };

    void IFrameHandler.OnFrame(in FrameHeader header, ref MarshalReader payload)
    {
        if (header.Version != FrameHeader.CurrentVersion)
        {
            throw new XCallProtocolException($"Frame version {header.Version} is not supported (this build speaks {FrameHeader.CurrentVersion}).");
        }
        if (header.Flags != 0 && (header.Flags & ~ValidFlags(header.Kind)) != 0)
        {
            throw new XCallProtocolException($"Frame flags 0x{header.Flags:x4} are not valid on a {header.Kind} frame.");
        }
        switch (header.Kind)
        {
            case FrameKind.Reply:
            case FrameKind.Error:
                if (FindCall(header.CallId) is { } answered)
                {
                    if (((header.Flags & FrameFlags.LongWait) != 0) != answered.LongWait)
                    {
                        // The transport counts answers by the mark: one answered otherwise than its call would put the count off for good.
                        throw new XCallProtocolException($"The answer to call {header.CallId} {(answered.LongWait ? "lacks" : "carries")} the LongWait flag its call {(answered.LongWait ? "carried" : "lacked")}.");
                    }
                    answered.CompleteWithReply(header, ref payload);
                }
                break;
            case FrameKind.Call:
            case FrameKind.OneWay:
                OnCall(header, ref payload);
                break;
            case FrameKind.Cancel:
                _serverCalls.Find(header.CallId)?.RequestCancel();
                break;
            case FrameKind.Ping:
                TrySendControl(FrameKind.Pong, header.CallId, 0, 0, Channel.LinkGeneration); // on this link or none: never a reconnect
                break;
            case FrameKind.Hello:
                OnHello(header, ref payload);
                break;
            case FrameKind.Release:
                _references.OnRelease(header.ObjectId, header.MethodId);
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
        _references.DropLink(linkGeneration);
        FailCalls(_calls.Snapshot(), error as XCallDisconnectedException ?? new XCallDisconnectedException(RemoteEndpoint, error.Message, error));
        LinkLost?.Invoke(this, error);
    }

    /// <summary>Raised when a reconnecting channel lost its link: calls in flight failed, later calls reconnect.</summary>
    public event Action<XCallConnection, Exception>? LinkLost;

    /// <summary>
    /// Raised (server side) when a <see cref="OneWayAttribute">one-way</see> call this connection dispatched threw:
    /// its caller gets nothing back, so this is where the failure can be seen. Raised on the thread that ran the
    /// call, before the next call of an inline connection runs; keep handlers short and never throwing.
    /// </summary>
    public event Action<XCallConnection, Exception>? OneWayCallFailed;

    private void FailCalls(PendingCall?[] slots, XCallDisconnectedException failure)
    {
        foreach (PendingCall? call in slots)
        {
            if (call is not null)
            {
                call.CompleteWithFailure(call.CallId, failure.Copy());
            }
        }
        CancelUncancellableCalls(closed: _calls.IsClosed);
        foreach (ServerCall call in _serverCalls.Snapshot())
        {
            call.RequestCancel();
        }
    }

    private void Close(Exception? error)
    {
        // Once, and a call is either refused by RentCall or failed here (see CallTable).
        if (!_calls.TryClose(error, out PendingCall?[] slots))
        {
            return;
        }
        // A transport's own disconnect already names the endpoint and the reason: pass it through unwrapped.
        FailCalls(slots, error as XCallDisconnectedException ?? new XCallDisconnectedException(RemoteEndpoint, error?.Message ?? "the connection was closed", error));
        _references.Clear();
        Closed?.Invoke(this, error);
    }
}
