using System.ComponentModel;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using XCall.Marshal;
using XCall.Transport;

namespace XCall.Runtime.CompilerServices;

/// <summary>
/// The server side of one call: how its dispatcher writes the reply, and its cancellation. Pooled per
/// connection for sync calls; kept until the task ends for async ones.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public sealed class ServerCall
{
    private CancellationTokenSource? _cts;
    private bool _cancelRequested;
    private bool _frameOpen;
    private System.Buffers.ArrayBufferWriter<byte>? _discard;
    private bool _discarding; // a reply nobody can receive is being written into _discard

    internal ServerCall(XCallConnection connection) => Connection = connection;

    internal XCallConnection Connection { get; }

    internal ulong CallId { get; private set; }

    internal uint MethodId { get; private set; }

    internal bool IsOneWay { get; private set; }

    /// <summary>The flags the call's reply or error frame carries back: <see cref="FrameFlags.LongWait"/> when the call had it.</summary>
    internal ushort ReplyFlags { get; set; }

    /// <summary>The <see cref="Transport.FrameChannel.LinkGeneration"/> the call arrived on: its reply goes back on that link or nowhere.</summary>
    internal int Link { get; set; }

    internal bool Replied { get; private set; }

    /// <summary>True while the call is in the connection's in-flight table (it outlived its dispatch).</summary>
    internal bool InFlight { get; set; }

    /// <summary>
    /// What the call holds of the connection's bound on concurrent calls (see <see cref="Admission.TryAdmit"/>):
    /// 0 when it holds nothing (inline dispatch, a call run on its waiting caller's thread) or gave it back.
    /// </summary>
    internal long Admitted { get; set; }

    internal Dispatcher? Dispatcher { get; set; }

    internal long StartTimestamp { get; set; }

    internal long RequestBytes { get; set; }

    private long _argumentsTimestamp;
    private long _replyTimestamp;
    private long _replyBytes;

    /// <summary>
    /// Marks the end of argument reading, before the target runs (generated dispatchers call it): checks that the
    /// frame's kind is the method's (<paramref name="oneWayMethod"/>: a [OneWay] method, which takes one-way frames
    /// only; any other takes call frames only), and notes the time for diagnostics.
    /// </summary>
    /// <exception cref="XCallProtocolException">The frame's kind is not the method's: the connection closes and the target never runs.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void ArgumentsRead(bool oneWayMethod)
    {
        if (oneWayMethod != IsOneWay)
        {
            ThrowKindMismatch(oneWayMethod);
        }
        if (StartTimestamp != 0)
        {
            _argumentsTimestamp = System.Diagnostics.Stopwatch.GetTimestamp();
        }
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowKindMismatch(bool oneWayMethod) =>
        throw new XCallProtocolException(oneWayMethod
            ? $"A call frame (which asks for a reply) for method 0x{MethodId:x8}, which is [OneWay]: the peer does not follow the contract."
            : $"A one-way frame (which gets no reply) for method 0x{MethodId:x8}, which is not [OneWay]: the peer does not follow the contract.");

    internal void Report(bool failed)
    {
        if (StartTimestamp == 0 || Dispatcher is null)
        {
            return;
        }
        long end = System.Diagnostics.Stopwatch.GetTimestamp();
        long args = _argumentsTimestamp != 0 ? _argumentsTimestamp : StartTimestamp;
        long reply = _replyTimestamp != 0 ? _replyTimestamp : end;
        Diagnostics.CallTelemetry.Record(
            Dispatcher.ContractName,
            Dispatcher.GetMethodName(MethodId),
            "server",
            Connection.RemoteEndpoint,
            RequestBytes,
            _replyBytes,
            Diagnostics.CallTelemetry.Nanoseconds(StartTimestamp, args) + Diagnostics.CallTelemetry.Nanoseconds(reply, end),
            0,
            Diagnostics.CallTelemetry.Nanoseconds(args, reply),
            failed);
        StartTimestamp = 0;
    }

    internal void Prepare(ulong callId, uint methodId, bool oneWay)
    {
        CallId = callId;
        MethodId = methodId;
        IsOneWay = oneWay;
        ReplyFlags = 0;
        Replied = false;
        _frameOpen = false;
        _discarding = false;
        _argumentsTimestamp = 0;
        _replyTimestamp = 0;
        _replyBytes = 0;
        StartTimestamp = 0;
        Admitted = 0;
        RegisterOnToken = false;
        SharedCancellation = null;
        _cancelRequested = false;
        if (_cts is not null && !_cts.TryReset())
        {
            _cts.Dispose();
            _cts = null;
        }
    }

    /// <summary>
    /// Readies a one-way call that completed at once for the next one-way call of a run (it keeps the room it was
    /// admitted with): only what a one-way call that completed can have changed is reset.
    /// </summary>
    internal void PrepareNextOneWay(uint methodId, int link)
    {
        Debug.Assert(IsOneWay && !Replied && !InFlight && !RegisterOnToken, "only a completed one-way call of a run is prepared again");
        if (_cts is not null || StartTimestamp != 0 || _argumentsTimestamp != 0 || _frameOpen || _discarding || _cancelRequested)
        {
            long admitted = Admitted;
            Prepare(0, methodId, oneWay: true);
            Admitted = admitted;
        }
        MethodId = methodId;
        Link = link;
    }

    /// <summary>
    /// Set for a call run on the receiving thread (Concurrent dispatch's fast path), which is not in the connection's
    /// in-flight table: the first use of <see cref="CancellationToken"/> puts it there, so cancel frames find it.
    /// </summary>
    internal bool RegisterOnToken { get; set; }

    /// <summary>
    /// For a call whose caller sends no cancel frame (<see cref="FrameFlags.Uncancellable"/>): the connection's source
    /// that a lost link or a close cancels, shared by every such call, whose token the method gets; else null.
    /// </summary>
    internal CancellationTokenSource? SharedCancellation { get; set; }

    /// <summary>The token passed to a method's <see cref="CancellationToken"/> parameter: cancelled when the caller cancels.</summary>
    public CancellationToken CancellationToken
    {
        get
        {
            if (SharedCancellation is { } shared)
            {
                return shared.Token;
            }
            if (_cts is null)
            {
                lock (this)
                {
                    _cts ??= new CancellationTokenSource();
                    if (_cancelRequested)
                    {
                        _cts.Cancel();
                    }
                }
                if (RegisterOnToken)
                {
                    RegisterOnToken = false;
                    Connection.RegisterServerCall(this);
                }
            }
            return _cts.Token;
        }
    }

    internal void RequestCancel()
    {
        CancellationTokenSource? cts;
        lock (this)
        {
            _cancelRequested = true;
            cts = _cts;
        }
        try
        {
            cts?.Cancel();
        }
        catch (AggregateException)
        {
            // A callback registered by the target threw; the cancel itself happened.
        }
    }

    /// <summary>Starts the reply frame and returns a writer straight into transport memory.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public MarshalWriter BeginReply()
    {
        System.Buffers.IBufferWriter<byte> output = BeginReplyFrame();
        // A dropped reply exposes nothing: it is written without the channel's send side, beside a frame another
        // thread may have open, so it must not touch that frame's exports (see ObjectReferenceMarshaller).
        return new MarshalWriter(output) { Context = _discarding ? ObjectReferenceMarshaller.Nowhere : Connection, Limits = Connection.Options.Limits };
    }

    /// <summary>Publishes the reply begun by <see cref="BeginReply"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void EndReply(ref MarshalWriter writer)
    {
        _replyBytes = writer.BytesWritten;
        writer.Flush();
        CommitReplyFrame();
    }

    /// <summary>Sends an empty reply (void methods): the frame header alone, no writer.</summary>
    public void ReplyVoid()
    {
        if (IsOneWay)
        {
            return;
        }
        BeginReplyFrame();
        CommitReplyFrame();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private System.Buffers.IBufferWriter<byte> BeginReplyFrame()
    {
        if (StartTimestamp != 0)
        {
            _replyTimestamp = System.Diagnostics.Stopwatch.GetTimestamp();
        }
        // Open only once the channel began the frame: a channel that refuses (closed) holds nothing to abort.
        if (Connection.BeginFrameOnLink(new FrameHeader(FrameKind.Reply, CallId, 0, MethodId, ReplyFlags), Link) is not { } output)
        {
            return Discard();
        }
        _frameOpen = true;
        return output;
    }

    /// <summary>
    /// The call came over a link that is gone (a reconnecting channel replaced it): the reply is written into
    /// a scratch buffer and dropped, never sent to the peer of the new link, whose own calls may have this id.
    /// </summary>
    private System.Buffers.IBufferWriter<byte> Discard()
    {
        _discard ??= new System.Buffers.ArrayBufferWriter<byte>();
        _discard.ResetWrittenCount();
        _discarding = true;
        _frameOpen = true;
        return _discard;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void CommitReplyFrame()
    {
        _frameOpen = false;
        Replied = true;
        // Before the reply leaves: a caller that has its reply may send the next call at once, and must find
        // the room this call held free again.
        Connection.ReleaseAdmission(this);
        if (_discarding)
        {
            EndDiscard(); // it exported nothing (written with ObjectReferenceMarshaller.Nowhere as context)
            return;
        }
        Connection.SendOpenFrame();
    }

    private void EndDiscard()
    {
        _discarding = false;
        _discard!.ResetWrittenCount();
    }

    internal void AbortOpenFrame()
    {
        if (_frameOpen)
        {
            _frameOpen = false;
            if (_discarding)
            {
                EndDiscard();
                return;
            }
            Connection.DropOpenFrame();
        }
    }

    // The Complete methods reply at once when the task is already done; otherwise the reply is written by the
    // thread that completes the task (its continuations run inline there: ConfigureAwait(false), no context, and
    // the dispatch's own await in XCallConnection.AwaitDispatch is inline too), so a method whose task another
    // thread completes (a channel's reader taking a value) answers from that thread with no thread-pool hop, and
    // the receive thread that dispatched it was free from its first await. A task is awaited through a value task
    // that wraps it (no allocation), and a value task as it is, not through AsTask (which allocates a task to relay
    // the result).

    /// <summary>Replies when <paramref name="task"/> ends (methods returning <see cref="Task"/>).</summary>
    public ValueTask Complete(Task task) => Complete(new ValueTask(task));

    /// <summary>Replies when <paramref name="task"/> ends (methods returning <see cref="ValueTask"/>).</summary>
    public ValueTask Complete(ValueTask task)
    {
        if (task.IsCompletedSuccessfully)
        {
            task.GetAwaiter().GetResult(); // consumed once: a pooled IValueTaskSource resets in GetResult
            ReplyVoid();
            return default;
        }
        return CompleteSlow(task);
    }

    private async ValueTask CompleteSlow(ValueTask task)
    {
        await task.ConfigureAwait(false);
        ReplyVoid();
    }

    /// <summary>Replies with the result of <paramref name="task"/> when it ends (methods returning <see cref="Task{T}"/>).</summary>
    public ValueTask Complete<T>(Task<T> task, ResultWriter<T> write) => Complete(new ValueTask<T>(task), write);

    /// <summary>Replies with the result of <paramref name="task"/> when it ends (methods returning <see cref="ValueTask{T}"/>).</summary>
    public ValueTask Complete<T>(ValueTask<T> task, ResultWriter<T> write)
    {
        if (task.IsCompletedSuccessfully)
        {
            Reply(task.Result, write);
            return default;
        }
        return CompleteSlow(task, write);
    }

    private async ValueTask CompleteSlow<T>(ValueTask<T> task, ResultWriter<T> write)
    {
        T result = await task.ConfigureAwait(false);
        Reply(result, write);
    }

    private void Reply<T>(T result, ResultWriter<T> write)
    {
        if (IsOneWay)
        {
            return;
        }
        MarshalWriter writer = BeginReply();
        write(ref writer, result);
        EndReply(ref writer);
    }
}
