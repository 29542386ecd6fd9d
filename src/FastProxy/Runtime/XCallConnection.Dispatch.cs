using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using XCall.Marshal;
using XCall.Runtime.CompilerServices;
using XCall.Transport;

namespace XCall.Runtime;

public sealed partial class XCallConnection
{
    // The connection whose call this thread is running on the thread pool (the synchronous part of it), if any, and
    // that call's id (0 for a one-way call): a call this thread makes now is nested in that call (a callback to its
    // caller), and a call it makes on the same connection is sent as nested in it (FrameFlags.Nested), so the peer can
    // run it on the thread that waits for this call. One thread static object holds both: a dispatch sets and restores
    // them on every call with one lookup of the thread's statics (on Linux each lookup is a call to __tls_get_addr).
    [ThreadStatic]
    private static Dispatching? t_dispatch;

    /// <summary>What <see cref="t_dispatch"/> holds: one per thread, its fields set and restored by each dispatch.</summary>
    private sealed class Dispatching
    {
        public XCallConnection? Connection;
        public ulong CallId;

        /// <summary>Marks the thread as running call <paramref name="callId"/> of <paramref name="connection"/>; returns
        /// what it ran before, which <see cref="Leave"/> restores.</summary>
        public (XCallConnection? Connection, ulong CallId) Enter(XCallConnection connection, ulong callId)
        {
            (XCallConnection? Connection, ulong CallId) outer = (Connection, CallId);
            Connection = connection;
            CallId = callId;
            return outer;
        }

        /// <summary>Restores what <see cref="Enter"/> returned.</summary>
        public void Leave((XCallConnection? Connection, ulong CallId) outer) => (Connection, CallId) = outer;
    }

    /// <summary>This thread's <see cref="Dispatching"/>.</summary>
    private static Dispatching ThisThreadsDispatching => t_dispatch ?? NewDispatching();

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Dispatching NewDispatching() => t_dispatch = new Dispatching();

    // The call id of t_dispatch while this thread receives the connection's frames and runs a call there (inline
    // dispatch, or a one-way call past the bound): no call has this id (its low half would be slot 2^32 - 1;
    // slots are ints).
    private const ulong OnReceivingThread = ulong.MaxValue;

    // Set once by BeginDrain, read by the receiving thread for every call.
    private volatile bool _draining;

    // One QueuedCall kept for the next call queued (see QueuedCall); null while taken.
    private QueuedCall? _spareQueuedCall;

    private const string DrainingRefusal = "the server is stopping: it finishes the calls it has and takes no new ones";

    /// <summary>Calls this connection received and has not answered yet: queued, running, or awaiting their task.</summary>
    public int CallsInFlight => _serverCalls.Calls;

    /// <summary>
    /// From now on refuses every new call (its caller gets <see cref="XCallServerBusyException"/>, the call not run),
    /// except a one-way call (nobody could be told) and a callback nested in a call of this side (a call in flight may
    /// wait for it); completes when no call received is left unanswered, or the connection closes.
    /// </summary>
    internal Task BeginDrain()
    {
        _draining = true;
        return _serverCalls.WhenIdle();
    }

    /// <summary>Calls received under Concurrent dispatch that are queued or running (tests).</summary>
    internal int AdmittedCalls => _admission.Calls;

    /// <summary>The bytes of those calls' arguments (tests).</summary>
    internal long AdmittedArgumentBytes => _admission.ArgumentBytes;

    /// <summary>Whether this thread runs a call this connection dispatched (a call it makes now is a callback's).</summary>
    internal bool IsDispatchingOnThisThread => ReferenceEquals(t_dispatch?.Connection, this);

    /// <summary>
    /// What a call made while <paramref name="call"/> runs is nested in: the call, or nothing for a long wait
    /// (<see cref="FrameFlags.LongWait"/>): its caller has no thread waiting on the reply, and a nested frame is one the
    /// caller's side polls for, which a transport then wakes nobody for while its callers leave the ring marked.
    /// </summary>
    private static ulong NestingId(ServerCall call) => (call.ReplyFlags & FrameFlags.LongWait) != 0 ? 0 : call.CallId;

    /// <summary>The id of the call this thread serves for this connection, if a call made now is nested in it; else 0.</summary>
    internal ulong NestingCallId()
    {
        Dispatching? dispatch = t_dispatch;
        return dispatch is not null && ReferenceEquals(dispatch.Connection, this) ? dispatch.CallId : 0;
    }

    private void OnCall(in FrameHeader header, ref MarshalReader payload)
    {
        // A nested call names the call of ours it was made for (see BeginCall).
        ulong parentCallId = (header.Flags & FrameFlags.Nested) != 0 ? payload.Read<ulong>() : 0;
        ExposedObject target = _references.FindObject(header.ObjectId);
        bool oneWay = header.Kind == FrameKind.OneWay;
        if (_draining && parentCallId == 0 && !oneWay)
        {
            RefuseNotRun(header, Channel.LinkGeneration, DrainingRefusal);
            return;
        }
        if (Options.DispatchMode == DispatchMode.Inline)
        {
            InvokeOnReceivingThread(target, header.MethodId, ref payload, RentServerCall(header, oneWay));
            return;
        }

        // Concurrent: copy the arguments out of transport memory so the receiver moves on at once, as long as the
        // connection is within its bounds (ConnectionOptions.MaxConcurrentCalls, MaxConcurrentArgumentBytes).
        int length = checked((int)payload.Remaining);
        long weight = Admission.Weight(length);
        ServerCall concurrentCall = RentServerCall(header, oneWay);
        // A callback our caller's call caused is offered to that caller's thread first, and takes no room there:
        // that thread waits for its reply anyway, and runs it (re-entrant, as a local callback would run); no pool
        // thread, no lock the caller holds is waited for. Refusing it could fail a chain of callbacks that needs
        // no thread it does not already have.
        PendingCall? parent = parentCallId != 0 && !oneWay ? FindCall(parentCallId) : null;
        if (parent is null)
        {
            // Counted wherever it runs: a call run here that blocks keeps a thread (the one the receiving left) as a
            // queued one does.
            if (!_admission.TryAdmit(concurrentCall, weight, out long over))
            {
                OnCallPastBound(header, target, ref payload, concurrentCall, over);
                return;
            }
            if (length <= DetachedCopyLimit && Channel.CanDetachFrame)
            {
                RunDetached(target, ref payload, length, concurrentCall);
                return;
            }
            if (!oneWay && t_receivingWait is { } wait && wait.RunsInPlace(this, target.Target) && Channel.MayAnswerInPlace)
            {
                RunInWait(target, ref payload, concurrentCall, wait);
                return;
            }
        }
        byte[] buffer = BoundedArrayPool.Rent<byte>(Math.Max(length, 1));
        payload.ReadBlock(buffer.AsSpan(0, length));
        bool alone = !oneWay && Register(concurrentCall);
        QueuedCall queued = QueuedCall.Rent(this, target, buffer, length, concurrentCall, Channel.LinkGeneration, payload.PeerMemory);
        if (parent is not null)
        {
            if (parent.OfferNested(parentCallId, queued))
            {
                return;
            }
            if (!_admission.TryAdmit(concurrentCall, weight, out long held))
            {
                // Nobody waits for it on a thread (an async call's callback, a call that ended, or a peer naming
                // any call of ours): it needs the pool like any other call, and is refused like one.
                int link = concurrentCall.Link;
                queued.Return();
                ReturnServerCall(concurrentCall);
                BoundedArrayPool.Return(buffer);
                Refuse(header, held, link);
                return;
            }
        }
        if (parent is null && !oneWay && OfferToReceivingWait(target.Target, queued))
        {
            return; // read by a thread waiting on this connection for calls to this object: it runs the call itself
        }
        StepAsideFromReceivingWait();
        ThreadPool.UnsafeQueueUserWorkItem(queued, preferLocal: false);
        if (alone)
        {
            // One caller at a time (nothing else of this connection ran for the last calls): offer this core to
            // the pool thread that picks the call up. On a machine whose cores are all busy (the transports
            // poll while they wait), that thread otherwise waits for the scheduler for a time slice (see
            // "Dispatch" in docs/benchmarks.md for what it costs). Many callers at once keep the cores busy with
            // other calls anyway, and there the yield costs throughput, so they do not yield; nor do one-way calls.
            Thread.Yield();
        }
    }

    /// <summary>
    /// Runs a call read by a thread in <see cref="WaitRunningCalls"/> for calls to its target right where the thread
    /// read it, arguments in place and the receiving still held, as <see cref="DispatchMode.Inline"/> runs a call: such
    /// a target's methods do not block (see <see cref="WaitReceiving(IReplyWait, TimeSpan, object?)"/>), so the frames
    /// behind it wait no longer than they would for the thread to come back, and the reply goes out before the thread
    /// lets go of anything (a call that ends the wait, a write its thread reads, costs no copy and no hand-over of the
    /// receiving). Marked as running on the receiving thread, so a synchronous call it made on this connection would
    /// fail at once rather than wait for frames only this thread reads; run as the pool would run it otherwise (no
    /// synchronization context, the thread's execution context restored after it).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RunInWait(ExposedObject target, ref MarshalReader payload, ServerCall call, ReceivingWait wait)
    {
        PoolLikeRun run = PoolLikeRun.Enter();
        Dispatching dispatch = ThisThreadsDispatching;
        var outer = dispatch.Enter(this, OnReceivingThread);
        call.RegisterOnToken = true;
        try
        {
            payload.Context = this; // read on the thread that receives the frame's link: the current one
            Invoke(target, call.MethodId, ref payload, call);
        }
        finally
        {
            dispatch.Leave(outer);
            run.Leave();
        }
        wait.RanInPlace();
    }

    // The largest arguments a call run on the receiving thread under Concurrent dispatch copies onto the stack.
    private const int StackCopyLimit = 512;

    // The largest arguments such a call copies at all: beyond, the copy costs more than the pool's hop saves.
    private const int DetachedCopyLimit = 64 * 1024;

    /// <summary>
    /// Concurrent dispatch's fast path: runs <paramref name="call"/> on this thread, the one that receives the
    /// connection's frames, as the pool would run it (its arguments copied out, the call marked as this thread's, so
    /// its callbacks are nested in it), after the transport took the frame as consumed (<see cref="FrameChannel.DetachFrame"/>):
    /// while the call waits for a callback's reply this thread reads the connection's frames, and when it takes long
    /// the transport hands its receiving to another thread (docs/remoting.md, "Dispatch").
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    [SkipLocalsInit] // the stack copy is read only as far as the arguments were copied into it
    private void RunDetached(ExposedObject target, ref MarshalReader payload, int length, ServerCall call)
    {
        IPeerMemory? peerMemory = payload.PeerMemory;
        byte[]? rented = null;
        Span<byte> copy = length <= StackCopyLimit ? stackalloc byte[StackCopyLimit] : (rented = ArrayPool<byte>.Shared.Rent(length));
        // The reader does not keep the span it copies into; the compiler cannot know it of a stack span.
        payload.ReadBlock(MemoryMarshal.CreateSpan(ref MemoryMarshal.GetReference(copy), length));
        Channel.DetachFrame(); // the payload's memory is the transport's again
        Dispatching dispatch = ThisThreadsDispatching;
        var outer = dispatch.Enter(this, NestingId(call));
        bool oneWay = call.IsOneWay;
        call.RegisterOnToken = !oneWay;
        try
        {
            var reader = new MarshalReader(copy[..length], Options.Limits) { Context = ReadContextOf(call.Link), PeerMemory = peerMemory };
            bool runOn = oneWay && rented is null;
            if (Invoke(target, call.MethodId, ref reader, call, keep: runOn))
            {
                RunNextOneWayCalls(copy, call); // completed at once: the run goes on with it and the room it holds
            }
            else if (runOn)
            {
                RunNextOneWayCalls(copy, null);
            }
        }
        catch (Exception ex)
        {
            // As for a queued call: malformed arguments, or the runtime failed to answer. The frame is consumed,
            // so nothing may propagate into the transport's loop: the connection closes here.
            try
            {
                Close(ex);
                Channel.Dispose();
            }
            catch (Exception)
            {
                // A Closed handler threw: the connection is closed either way.
            }
        }
        finally
        {
            dispatch.Leave(outer);
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    /// <summary>
    /// After a detached one-way call: runs the one-way calls whose frames already follow it, one after the other on this
    /// thread, each taken straight from the transport (<see cref="FrameChannel.TryDetachNextOneWay"/>) into
    /// <paramref name="buffer"/>: a run of one-way calls costs one pass through the receive loop, not one per call, and
    /// they run in the order they were sent, as they would one frame at a time. One call of the run is admitted (counted)
    /// at a time, as a detached call is; one past the bounds runs here all the same, as a one-way call past them always
    /// does. A malformed frame throws out of the run, and the caller closes the connection.
    /// </summary>
    /// <remarks>
    /// What does not change from frame to frame is done once per run: the calls run one at a time, so one
    /// <see cref="ServerCall"/> (rented and admitted once) serves each call that completes at once, and the target and the
    /// reader's context are looked up again only when the frame names another object or link. A call that goes on
    /// asynchronously keeps its <see cref="ServerCall"/>, and the next frame rents a new one. <paramref name="call"/>:
    /// the detached call the run follows, when it completed at once (the run takes it over), else null.
    /// </remarks>
    private void RunNextOneWayCalls(Span<byte> buffer, ServerCall? call)
    {
        ExposedObject? target = null;
        ulong targetId = 0;
        object? context = null;
        int contextLink = 0;
        try
        {
            while (Channel.TryDetachNextOneWay(buffer, out FrameHeader header, out int length))
            {
                if (header.Version != FrameHeader.CurrentVersion || header.Flags != 0)
                {
                    throw new XCallProtocolException($"A one-way frame with version {header.Version} and flags 0x{header.Flags:x4}: this build speaks version {FrameHeader.CurrentVersion}, with no flags on one-way frames.");
                }
                if (target is null || header.ObjectId != targetId)
                {
                    // No release frame runs inside the run (only one-way frames are taken), so the object stays exposed.
                    target = _references.FindObject(header.ObjectId);
                    targetId = header.ObjectId;
                }
                if (call is null)
                {
                    call = RentServerCall(0, header.MethodId, oneWay: true);
                }
                else
                {
                    call.PrepareNextOneWay(header.MethodId, Channel.LinkGeneration);
                }
                if (call.Admitted == 0)
                {
                    // A new call, or one refused so far (the connection was at its bounds): room may have freed.
                    _admission.TryAdmit(call, Admission.Weight(length), out _);
                }
                if (context is null || call.Link != contextLink)
                {
                    context = ReadContextOf(call.Link);
                    contextLink = call.Link;
                }
                var reader = new MarshalReader(buffer[..length], Options.Limits) { Context = context };
                ServerCall running = call;
                call = null; // the call's own again until it comes back completed
                if (Invoke(target, header.MethodId, ref reader, running, keep: true))
                {
                    call = running;
                }
            }
        }
        finally
        {
            if (call is not null)
            {
                ReturnServerCall(call);
            }
        }
    }

    /// <summary>Gives back the room <paramref name="call"/> holds, if any: when its reply is published, or it ends without one.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ReleaseAdmission(ServerCall call) => _admission.Release(call);

    /// <summary>
    /// A call past the connection's bounds: a one-way call runs here, on the receiving thread, as with
    /// <see cref="DispatchMode.Inline"/>: it is not lost, and while it runs no frame is read, so the transport
    /// fills and holds the sender back. Any other call is refused; its caller gets <see cref="XCallServerBusyException"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void OnCallPastBound(in FrameHeader header, ExposedObject target, ref MarshalReader payload, ServerCall call, long held)
    {
        if (!call.IsOneWay)
        {
            int link = call.Link;
            ReturnServerCall(call);
            Refuse(header, held, link);
            return;
        }
        InvokeOnReceivingThread(target, header.MethodId, ref payload, call);
    }

    /// <summary>
    /// Runs <paramref name="call"/> on this thread, the one that receives the connection's frames
    /// (<see cref="DispatchMode.Inline"/>, or a one-way call past the bounds), reading its arguments in place.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void InvokeOnReceivingThread(ExposedObject target, uint methodId, ref MarshalReader payload, ServerCall call)
    {
        // Marked as running on the receiving thread: a synchronous call it makes on this connection would wait
        // for a reply that only this thread could read, so it fails at once instead (see BeginCall).
        Dispatching dispatch = ThisThreadsDispatching;
        var outer = dispatch.Enter(this, OnReceivingThread);
        try
        {
            payload.Context = this; // read here, on the receive thread of the frame's link: the current one
            Invoke(target, methodId, ref payload, call);
        }
        finally
        {
            dispatch.Leave(outer);
        }
    }

    /// <summary>
    /// Refuses a call past the connection's bounds with an error frame marked <see cref="RemoteError.NotRun"/>, on
    /// <paramref name="link"/> (the one the call came over) or nowhere: a reconnecting channel that lost that link
    /// must neither reconnect on the receiving thread for it nor send the refusal to the peer of a new link, whose
    /// own calls may have this id.
    /// </summary>
    private void Refuse(in FrameHeader header, long held, int link) => RefuseNotRun(header, link, _admission.Refusal(held));

    /// <summary>Refuses a call that was not run, for <paramref name="reason"/> (see <see cref="Refuse"/>).</summary>
    private void RefuseNotRun(in FrameHeader header, int link, string reason)
    {
        if (IsClosed)
        {
            return;
        }
        SendErrorFrame(
            new FrameHeader(FrameKind.Error, header.CallId, RemoteError.NotRun, header.MethodId, (ushort)(header.Flags & FrameFlags.LongWait)),
            link,
            new RemoteInvocationException(XCallServerBusyException.WireTypeName, reason, null),
            admitted: null);
    }

    private void OnHello(in FrameHeader header, ref MarshalReader payload)
    {
        string name = payload.ReadString() ?? throw new XCallProtocolException("Hello without a contract name.");
        ulong hash = payload.Read<ulong>();
        payload.EnsureFullyConsumed();
        string? refusal = null;
        ulong objectId = 0;
        if (Services is null || !Services.TryGet(name, out ServiceTable.Entry entry))
        {
            refusal = $"no service for {name} is offered here";
        }
        else if (entry.Hash != hash)
        {
            refusal = $"contract mismatch for {name}: the client was built with hash {hash:x16}, the server with {entry.Hash:x16}; rebuild both from the same contract";
        }
        else
        {
            objectId = entry.ObjectId;
            Expose(objectId, entry.Target, entry.Dispatcher);
        }
        if (IsClosed)
        {
            return;
        }
        var writer = new MarshalWriter(Channel.BeginFrame(new FrameHeader(refusal is null ? FrameKind.Reply : FrameKind.Error, header.CallId, 0, 0)));
        if (refusal is null)
        {
            writer.Write(objectId);
        }
        else
        {
            RemoteError.Write(ref writer, "XCall.XCallException", refusal);
        }
        writer.Flush();
        Channel.CommitFrame();
    }

    /// <summary>
    /// Runs <paramref name="call"/>; returns it to the pool when it ends, except with <paramref name="keep"/> when it
    /// completed at once: then it returns true and the caller still holds the call (and the room it was admitted with).
    /// </summary>
    private bool Invoke(ExposedObject target, uint methodId, ref MarshalReader args, ServerCall call, bool keep = false)
    {
        long start = Diagnostics.CallTelemetry.Start();
        if (start != 0)
        {
            call.StartTimestamp = start;
            call.Dispatcher = target.Dispatcher;
            call.RequestBytes = args.Remaining;
        }
        ValueTask pending;
        try
        {
            pending = target.Dispatcher.Dispatch(target.Target, methodId, ref args, call);
        }
        catch (XCallProtocolException)
        {
            // The connection closes over it; the call goes back all the same, so no count of calls in flight (and no
            // drain waiting for it) keeps waiting for a call that never ran.
            call.AbortOpenFrame();
            ReturnServerCall(call);
            throw;
        }
        catch (Exception ex)
        {
            Fail(call, ex);
            return false;
        }
        if (pending.IsCompletedSuccessfully)
        {
            call.Report(failed: false);
            if (keep)
            {
                return true;
            }
            ReturnServerCall(call);
            return false;
        }
        Register(call);
        _ = AwaitDispatch(pending, call);
        return false;
    }

    private async Task AwaitDispatch(ValueTask pending, ServerCall call)
    {
        try
        {
            await pending.ConfigureAwait(false);
            call.Report(failed: false);
            ReturnServerCall(call);
        }
        catch (Exception ex)
        {
            Fail(call, ex);
        }
    }

    private void Fail(ServerCall call, Exception error)
    {
        try
        {
            call.AbortOpenFrame();
            call.Report(failed: true);
            if (call.IsOneWay)
            {
                OneWayCallFailed?.Invoke(this, error);
            }
            else if (!call.Replied && !IsClosed)
            {
                SendError(call, error);
            }
        }
        finally
        {
            ReturnServerCall(call);
        }
    }

    private void SendError(ServerCall call, Exception error)
    {
        // Everything the frame carries is read off the exception first: its members are user code (a Message
        // override may throw, or call the peer), which must not run while this thread holds a frame open.
        RemoteInvocationException record = RemoteError.Snapshot(error);
        SendErrorFrame(new FrameHeader(FrameKind.Error, call.CallId, 0, call.MethodId, call.ReplyFlags), call.Link, record, admitted: call);
    }

    /// <summary>
    /// Sends an error frame for a call that came over link <paramref name="link"/>, on that link or nowhere (its
    /// caller is not on a newer one), first giving back the room <paramref name="admitted"/> holds, as a reply does.
    /// </summary>
    private void SendErrorFrame(in FrameHeader header, int link, RemoteInvocationException record, ServerCall? admitted)
    {
        try
        {
            if (BeginFrameOnLink(header, link) is not { } output)
            {
                return;
            }
            var writer = new MarshalWriter(output);
            RemoteError.Write(ref writer, record);
            writer.Flush();
            if (admitted is not null)
            {
                ReleaseAdmission(admitted); // before the caller can have the error and send again
            }
            Channel.CommitFrame();
        }
        catch (XCallDisconnectedException)
        {
            // The caller is gone; nobody is waiting for this error.
        }
    }

    private ServerCall RentServerCall(ulong callId, uint methodId, bool oneWay) =>
        _serverCalls.Rent(callId, methodId, oneWay, Channel.LinkGeneration);

    private ServerCall RentServerCall(in FrameHeader header, bool oneWay)
    {
        ServerCall call = RentServerCall(header.CallId, header.MethodId, oneWay);
        call.ReplyFlags = (ushort)(header.Flags & FrameFlags.LongWait); // its answer carries the bit back
        if ((header.Flags & FrameFlags.Uncancellable) != 0)
        {
            while (true)
            {
                int running = Volatile.Read(ref _uncancellableRunning);
                if (running >= 0 && Interlocked.CompareExchange(ref _uncancellableRunning, running + 1, running) == running)
                {
                    break;
                }
                Thread.SpinWait(1); // the source is being reset: a few instructions
            }
            call.SharedCancellation = Volatile.Read(ref _linkCancellation);
        }
        return call;
    }

    // The token of the calls whose callers cannot cancel them (FrameFlags.Uncancellable): no cancel frame comes for
    // them, but a lost link or a close ends them as it ends every other call (FailCalls), through this one source,
    // replaced by a new one at a lost link. _uncancellableRunning counts the calls holding it (-1 while it is reset):
    // when the last one ends, the source is reset, so what their methods left registered on the token (a registration
    // never disposed) goes, as it goes with a call's own source when the call is pooled again.
    private CancellationTokenSource _linkCancellation = new();
    private int _uncancellableRunning;

    /// <summary>Tests: the calls running that hold the shared token of calls nobody can cancel.</summary>
    internal int UncancellableRunning => Volatile.Read(ref _uncancellableRunning);

    /// <summary>A call that held the shared token ended; the last one resets the source.</summary>
    private void EndUncancellable()
    {
        if (Interlocked.Decrement(ref _uncancellableRunning) == 0 && Interlocked.CompareExchange(ref _uncancellableRunning, -1, 0) == 0)
        {
            Volatile.Read(ref _linkCancellation).TryReset(); // false once cancelled: the connection closed
            Volatile.Write(ref _uncancellableRunning, 0);
        }
    }

    /// <summary>Cancels the token of the calls whose callers cannot cancel them, and, unless the connection closed, gives the calls after a new one.</summary>
    private void CancelUncancellableCalls(bool closed)
    {
        CancellationTokenSource ended = closed ? Volatile.Read(ref _linkCancellation) : Interlocked.Exchange(ref _linkCancellation, new CancellationTokenSource());
        try
        {
            ended.Cancel();
        }
        catch (AggregateException)
        {
            // A callback registered by a target threw; the cancel itself happened.
        }
    }

    /// <summary>Makes a call run on the receiving thread reachable by cancel frames (see <see cref="ServerCall.RegisterOnToken"/>).</summary>
    internal void RegisterServerCall(ServerCall call) => _serverCalls.Register(call);

    /// <summary>Makes a call that outlives its dispatch reachable by cancel frames; true when it is alone (see <see cref="ServerCallTable.Register"/>).</summary>
    private bool Register(ServerCall call) => _serverCalls.Register(call);

    private void ReturnServerCall(ServerCall call)
    {
        if (call.SharedCancellation is not null)
        {
            call.SharedCancellation = null;
            EndUncancellable();
        }
        ReleaseAdmission(call); // a one-way call, or one whose reply or error was never published
        _serverCalls.Return(call);
    }

    /// <summary>
    /// A call's arguments and target on their way to the thread that runs it: a pool thread, or the caller waiting
    /// for the call it is nested in. Each runs once; it copies what it carries and goes back to its connection's
    /// spare before the call runs, so a callback (and a chain of them, one at a time) allocates none.
    /// </summary>
    private sealed class QueuedCall : IThreadPoolWorkItem
    {
        private XCallConnection _connection = null!;
        private ExposedObject _target = null!;
        private byte[] _buffer = null!;
        private int _length;
        private ServerCall _call = null!;
        private int _link;
        private IPeerMemory? _peerMemory;

        public static QueuedCall Rent(XCallConnection connection, ExposedObject target, byte[] buffer, int length, ServerCall call, int link, IPeerMemory? peerMemory)
        {
            QueuedCall queued = Interlocked.Exchange(ref connection._spareQueuedCall, null) ?? new QueuedCall();
            queued._connection = connection;
            queued._target = target;
            queued._buffer = buffer;
            queued._length = length;
            queued._call = call;
            queued._link = link;
            queued._peerMemory = peerMemory;
            return queued;
        }

        /// <summary>Gives it back to its connection's spare: from <see cref="Execute"/> once its fields are copied, or unrun when the call is refused.</summary>
        public void Return()
        {
            XCallConnection connection = _connection;
            _connection = null!;
            _target = null!;
            _buffer = null!;
            _call = null!;
            _peerMemory = null;
            Volatile.Write(ref connection._spareQueuedCall, this);
        }

        public void Execute()
        {
            XCallConnection connection = _connection;
            ExposedObject target = _target;
            byte[] buffer = _buffer;
            int length = _length;
            ServerCall call = _call;
            int link = _link;
            IPeerMemory? peerMemory = _peerMemory;
            Return(); // nothing below reads this object, which the next queued call may take at once

            Dispatching dispatch = ThisThreadsDispatching;
            var outer = dispatch.Enter(connection, NestingId(call));
            try
            {
                var reader = new MarshalReader(buffer.AsSpan(0, length), connection.Options.Limits) { Context = connection.ReadContextOf(link), PeerMemory = peerMemory };
                connection.Invoke(target, call.MethodId, ref reader, call);
            }
            catch (Exception ex)
            {
                // Malformed arguments, or the runtime itself failed to answer: this connection is over. An
                // exception escaping a thread-pool work item would end the process, so it stops here.
                try
                {
                    connection.Close(ex);
                    connection.Channel.Dispose();
                }
                catch (Exception)
                {
                    // A Closed handler threw: the connection is closed either way, and this runs on the pool or
                    // on a waiting caller's thread, where nothing may escape.
                }
            }
            finally
            {
                dispatch.Leave(outer);
                BoundedArrayPool.Return(buffer);
            }
        }
    }
}
