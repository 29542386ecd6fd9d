using System.ComponentModel;
using System.Runtime.CompilerServices;
using System.Threading.Tasks.Sources;
using XCall.Marshal;
using XCall.Transport;

namespace XCall.Runtime.CompilerServices;

/// <summary>
/// One call waiting for its reply. Pooled per connection: the reply buffer and the wait machinery are
/// reused, so a call allocates nothing.
/// </summary>
/// <remarks>
/// Design: the caller owns the object from <c>Rent</c> to <c>Return</c>. A completer (the thread that
/// received the reply, a timeout, a cancellation, the connection failing all calls) first claims the call
/// by swapping <see cref="_claimId"/> from the call id it expects to 0, so exactly one completer wins and a
/// late reply for an earlier use of this pooled object never completes a later one. The winner stores the
/// reply, then publishes <see cref="_state"/> = Done; the caller reads the reply only after it observed Done. Async waiters use a versioned
/// <see cref="ManualResetValueTaskSourceCore{TResult}"/>, so a stale await of a recycled call is caught.
/// <para>
/// An async call's source is completed, and its continuation run, by the connection's <see cref="CompletionDrain"/>,
/// never by the completer: the completer pushes the call there only when the caller awaits it. Whether it does is
/// decided once per use in <see cref="_asyncWait"/>: the caller CASes it from Undecided to Awaited when it returns
/// the value task (<see cref="AwaitCompletion"/>), the completer from Undecided to CompletedFirst after Done. The
/// one that loses the race knows the other went first: a caller that finds the call completed returns a completed
/// task and may reuse the call at once, as no drainer will touch it. A call whose typed reply completes where the
/// reply is read (<see cref="AsyncReply.CompletesWhereReplied"/>: a result without references) skips the drainer:
/// the completer reads the reply, gives the call back and completes a task that runs its continuations on the pool.
/// </para>
/// <para>
/// A synchronous caller also serves calls nested in its own call (a callback its call caused, see
/// <see cref="OfferNested"/>): the receiving side hands such a call to the waiting caller instead of the
/// thread pool, the waits end early with <see cref="WaitOver"/>, and <see cref="XCallConnection.SendAndWait(PendingCall)"/>
/// runs it on the caller's thread and waits again.
/// </para>
/// <para>
/// A synchronous caller that blocks sleeps on the call's own <see cref="WakeWord"/> (a private futex), which the
/// completer or the offerer of a nested call wakes after publishing <see cref="_state"/> or <see cref="_nested"/>:
/// one wake-up per blocked call, and no lock for either side to take again; the monitor on <see cref="_gate"/> only
/// where futexes are missing.
/// </para>
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public sealed partial class PendingCall : IValueTaskSource, IReplyWait
{
    private const int Waiting = 0;
    private const int Done = 1;

    private readonly object _gate = new();
    private readonly WakeWord? _wake = WakeWord.IsSupported ? new WakeWord() : null; // null: sleep on _gate
    private ManualResetValueTaskSourceCore<bool> _core;
    private byte[] _reply = new byte[256];
    private int _replyLength;
    private FrameKind _replyKind;
    private bool _notRun; // an error frame marked RemoteError.NotRun: the peer refused the call before running it
    private Exception? _failure;
    private ulong _claimId;
    private int _state;
    private bool _async;
    private int _sleeping;
    private uint _generation;
    private int _completing;
    private IThreadPoolWorkItem? _nested;
    private bool _yieldOnWake;
    private int _asyncWait;

    private const int Undecided = 0;
    private const int Awaited = 1;
    private const int CompletedFirst = 2;

    private readonly XCallConnection _connection;

    internal PendingCall(int slot, XCallConnection connection)
    {
        Slot = slot;
        _connection = connection;
        // Continuations run on the connection's drainer, which completes the source (see Design).
        _core.RunContinuationsAsynchronously = false;
    }

    internal int Slot { get; }

    /// <summary>The next call in a <see cref="CompletionDrain"/> list (owned by that drain while the call is in it).</summary>
    internal PendingCall? NextCompleted;

    /// <summary>The slot below this one + 1 (0: none) while the call is in its table's free list.</summary>
    internal int NextFreeSlot;

    /// <summary>
    /// What completes the caller's task when a drainer takes the call (<see cref="RunContinuation"/>): the typed reply
    /// of a call made without a state machine (<see cref="SendForTask{T}"/> and friends); null: the call's own source.
    /// </summary>
    private AsyncReply? _completion;

    /// <summary>The typed reply last used by this call, reused by its next call with the same result type.</summary>
    private AsyncReply? _spareReply;

    /// <summary>The <see cref="Transport.FrameChannel.LinkGeneration"/> the call went out on (its reply can only come back on it).</summary>
    internal int Link { get; set; }

    /// <summary>The id of the call on the wire.</summary>
    internal ulong CallId { get; set; }

    internal uint MethodId { get; set; }

    /// <summary>Bytes of the argument payload (set by the generated proxy, for diagnostics).</summary>
    public long RequestBytes { get; internal set; }

    internal ProxyBase? Proxy { get; set; }

    /// <summary>The async call made just before this one on the connection was still in flight when it began (it is pipelined behind it).</summary>
    internal bool Pipelined { get; set; }

    /// <summary>An async call of a <see cref="LongWaitAttribute"/> method: nothing polls for its reply (<see cref="FrameFlags.LongWait"/>).</summary>
    internal bool LongWait { get; set; }

    internal long StartTimestamp { get; set; }

    /// <summary>The link whose frame for this call may lend arrays (<see cref="FrameChannel.LoanLink"/>); null when none.</summary>
    internal FrameChannel? LoanLink { get; set; }

    /// <summary>The <see cref="Environment.TickCount64"/> by which the call must be answered (0: no call timeout),
    /// set when the call began: a wait for a reconnect and the wait for the reply share it.</summary>
    internal long Deadline { get; set; }

    internal long SentTimestamp { get; set; }

    internal long ReplyTimestamp { get; set; }

    internal int ReplyLength => _replyLength;

    internal bool Failed => _failure is not null || _replyKind == FrameKind.Error;

    /// <summary>True once the reply (or a failure) arrived.</summary>
    internal bool IsCompleted => Volatile.Read(ref _state) == Done;

    /// <summary>
    /// Whether the calling thread runs a call this call's connection dispatched, so this call is nested in it (a
    /// callback): the transports then leave the receiving to their receive thread (see "Dispatch" in docs/remoting.md).
    /// </summary>
    internal bool IsNested => _connection.IsDispatchingOnThisThread;

    bool IReplyWait.IsNested => IsNested;

    bool IReplyWait.IsCompleted => IsCompleted;

    bool IReplyWait.WaitOver => WaitOver;

    bool IReplyWait.Wait(long deadline) => Wait(deadline);

    // A sync caller takes the nested call and runs it, then waits again (XCallConnection.SendAndWait); an async call is never offered one.
    bool IReplyWait.WaitsAgain => Volatile.Read(ref _nested) is not null && !IsCompleted;

    /// <summary>True when a waiter stops waiting: the call completed, or a call nested in it waits to run on the caller's thread.</summary>
    internal bool WaitOver => Volatile.Read(ref _state) == Done || Volatile.Read(ref _nested) is not null;

    /// <summary>
    /// Hands a call nested in this one (made by the peer while it served this call) to the caller waiting for
    /// this call, which runs it on its own thread. False when nobody waits synchronously for this use of the
    /// call (an async call, one completed, <paramref name="callId"/> an earlier use), or one nested call already
    /// waits to run: run it elsewhere.
    /// </summary>
    internal bool OfferNested(ulong callId, IThreadPoolWorkItem work)
    {
        lock (_gate)
        {
            // _claimId is the use's id until a completer claims it (and Prepare writes it last): while it reads
            // callId, the caller has not seen the call complete, and will look at _nested after it does.
            if (Volatile.Read(ref _claimId) != callId || _async || _nested is not null)
            {
                return false;
            }
            Interlocked.Exchange(ref _nested, work);
            if (Volatile.Read(ref _claimId) != callId && Interlocked.CompareExchange(ref _nested, null, work) == work)
            {
                return false; // completed meanwhile, and the caller did not take it: take it back
            }
            if (_wake?.TakeSleeper() == true)
            {
                _wake.Signal();
            }
            else if (_wake is null && Volatile.Read(ref _sleeping) != 0)
            {
                Monitor.PulseAll(_gate);
            }
            return true;
        }
    }

    /// <summary>The nested call to run on the caller's thread, if one waits.</summary>
    internal IThreadPoolWorkItem? TakeNested() =>
        Volatile.Read(ref _nested) is null ? null : Interlocked.Exchange(ref _nested, null);

    /// <summary>The caller stops waiting (the call completed): a nested call it did not run goes to the thread pool.</summary>
    internal void EndNested()
    {
        if (TakeNested() is { } work)
        {
            ThreadPool.UnsafeQueueUserWorkItem(work, preferLocal: false);
        }
    }

    /// <summary>True for a call completed through its value-task source (async methods).</summary>
    internal bool IsAsync => _async;

    internal void Prepare(uint methodId, bool isAsync)
    {
        // A completer that already published Done may still be finishing (waking a waiter, setting the
        // value-task result) on another thread: the object is reused only once it let go.
        // It may have lost its core meanwhile: spin briefly, then yield it (SpinWait), rather than spin out a time slice.
        var completer = new SpinWait();
        while (Volatile.Read(ref _completing) != 0)
        {
            completer.SpinOnce(sleep1Threshold: -1);
        }
        // The id pairs the reply with this use of the slot: the slot in the low half, a per-slot generation
        // (never 0, so no id is 0) in the high half.
        if (++_generation == 0)
        {
            _generation = 1;
        }
        ulong callId = ((ulong)_generation << 32) | (uint)Slot;
        CallId = callId;
        MethodId = methodId;
        _async = isAsync;
        _failure = null;
        _replyKind = FrameKind.Reply;
        _notRun = false;
        _replyLength = 0;
        RequestBytes = 0;
        ReplyTimestamp = 0;
        _state = Waiting;
        CancelledBeforeSend = false;
        CancelledToken = default;
        _asyncWait = Undecided;
        _completion = null;
        EndNested(); // nothing waits here unless a caller's wait ended in an exception
        if (isAsync)
        {
            // Before the id is published: a close failing every published call may complete this one at once.
            _core.Reset();
        }
        Volatile.Write(ref _claimId, callId);
    }

    /// <summary>Stores a reply payload (copied) and wakes the caller. Returns false if the call was already completed.</summary>
    internal bool CompleteWithReply(in FrameHeader header, ref MarshalReader payload)
    {
        if (!TryClaim(header.CallId))
        {
            return false;
        }
        long length = payload.Remaining;
        if (length > _reply.Length)
        {
            _reply = new byte[Math.Max(length, _reply.Length * 2L) > Array.MaxLength ? Array.MaxLength : (int)Math.Max(length, _reply.Length * 2L)];
        }
        payload.ReadBlock(_reply.AsSpan(0, (int)length));
        _replyLength = (int)length;
        if (StartTimestamp != 0)
        {
            ReplyTimestamp = System.Diagnostics.Stopwatch.GetTimestamp();
        }
        _replyKind = header.Kind;
        _notRun = header.Kind == FrameKind.Error && header.ObjectId == RemoteError.NotRun;
        return Finish();
    }

    /// <summary>Fails the call (disconnect, timeout) and wakes the caller.</summary>
    internal bool CompleteWithFailure(ulong callId, Exception failure)
    {
        if (!TryClaim(callId))
        {
            return false;
        }
        _failure = failure;
        return Finish();
    }

    private bool TryClaim(ulong callId)
    {
        if (callId == 0 || Interlocked.CompareExchange(ref _claimId, 0, callId) != callId)
        {
            return false;
        }
        // Visible before Done (the exchange in Finish is a full fence); cleared when Finish let go.
        Volatile.Write(ref _completing, 1);
        return true;
    }

    private bool Finish()
    {
        bool isAsync = _async;
        // Full fence (Dekker with WaitBlocking): either the waiter sees Done, or this sees the waiter asleep.
        Interlocked.Exchange(ref _state, Done);
        bool yieldAfter = false; // a sleeping waiter was woken, and asked this thread to yield
        if (isAsync)
        {
            if (Interlocked.CompareExchange(ref _asyncWait, CompletedFirst, Undecided) == Awaited)
            {
                if (_completion is { CompletesWhereReplied: true } reply)
                {
                    // Completed here: the call is ours alone until the reply gives it back, so let go first (a renter
                    // of the returned call then finds it free), and the task's continuations go to the thread pool.
                    _completion = null;
                    Volatile.Write(ref _completing, 0);
                    reply.Complete(this);
                    return true;
                }
                _connection.Completions.Push(this); // the drainer completes the source and runs the continuation
            }
        }
        else if (_wake is not null)
        {
            // The sleeper is claimed before the call is let go, and signalled after: the caller, woken, may reuse the
            // call at once (Prepare waits for _completing), and a late signal only ends a later sleep early.
            if (_wake.TakeSleeper())
            {
                yieldAfter = _yieldOnWake; // written before the waiter announced its sleep
                Volatile.Write(ref _completing, 0);
                _wake.Signal();
            }
            else
            {
                Volatile.Write(ref _completing, 0);
            }
        }
        else if (Volatile.Read(ref _sleeping) != 0)
        {
            lock (_gate)
            {
                Monitor.PulseAll(_gate);
            }
            yieldAfter = _yieldOnWake; // written before the waiter announced its sleep
        }
        if (isAsync || _wake is null)
        {
            Volatile.Write(ref _completing, 0);
        }
        if (yieldAfter)
        {
            // The waiter is a server method waiting for its callback's reply, and this thread (the receive
            // thread, polling on) would keep the core it needs: offer it, as OnCall does for a queued call.
            Thread.Yield();
        }
        return true;
    }



    /// <summary>Set when the caller's token was already cancelled before the frame was sent.</summary>
    internal bool CancelledBeforeSend { get; set; }

    /// <summary>The caller's token when <see cref="CancelledBeforeSend"/>: the exception carries it.</summary>
    internal CancellationToken CancelledToken { get; set; }

    /// <summary>Waits for completion or a nested call to run (<see cref="WaitOver"/>): spins briefly, then blocks.
    /// Returns false when <paramref name="deadline"/> passed.</summary>
    internal bool Wait(long deadline)
    {
        var spinner = new SpinWait();
        while (!WaitOver)
        {
            if (!spinner.NextSpinWillYield)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
                continue;
            }
            return WaitBlocking(deadline);
        }
        return true;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool WaitBlocking(long deadline)
    {
        // A caller whose call is nested in a call its connection dispatched (a server method waiting for its
        // callback's reply) asks the thread that wakes it to yield its core once: that thread (the receive
        // thread, polling on) would otherwise keep the core the woken thread needs, and where the cores are
        // all busy the callback round would wait for the scheduler.
        _yieldOnWake = _connection.NestingCallId() != 0;
        if (_wake is { } wake)
        {
            return Sleep(wake, deadline);
        }
        lock (_gate)
        {
            Interlocked.Exchange(ref _sleeping, 1);
            try
            {
                while (!WaitOver)
                {
                    long left = deadline == long.MaxValue ? Timeout.Infinite : deadline - Environment.TickCount64;
                    if (deadline != long.MaxValue && left <= 0)
                    {
                        return false;
                    }
                    Monitor.Wait(_gate, left > int.MaxValue ? int.MaxValue : (int)left);
                }
                return true;
            }
            finally
            {
                Volatile.Write(ref _sleeping, 0);
            }
        }
    }

    /// <summary>Sleeps on the call's own word until <see cref="WaitOver"/> (woken by the completer, see Finish) or the deadline.</summary>
    private bool Sleep(WakeWord wake, long deadline)
    {
        while (true)
        {
            wake.Prepare(); // a full fence before the check: a completer that published after it sees the sleeper
            if (WaitOver)
            {
                wake.Cancel();
                return true;
            }
            long left = deadline == long.MaxValue ? Timeout.Infinite : deadline - Environment.TickCount64;
            if (deadline != long.MaxValue && left <= 0)
            {
                wake.Cancel();
                return false;
            }
            wake.Sleep(left > int.MaxValue ? int.MaxValue : (int)left);
        }
    }

    /// <summary>A task that completes with the call (async methods).</summary>
    internal ValueTask AsValueTask() => new(this, _core.Version);

    /// <summary>
    /// The caller will await <see cref="AsValueTask"/> (async methods): true, and the completer then hands the call to
    /// the connection's drainer; false when the call completed first, and nobody will complete its source.
    /// </summary>
    internal bool AwaitCompletion() => Interlocked.CompareExchange(ref _asyncWait, Awaited, Undecided) == Undecided;

    /// <summary>
    /// From the drainer: completes the caller's task, running the awaiting continuation on this thread (through the
    /// call's typed reply when it has one, else its own source).
    /// </summary>
    internal void RunContinuation()
    {
        if (_completion is { } reply)
        {
            _completion = null;
            reply.Complete(this);
            return;
        }
        _core.SetResult(true);
    }

    /// <summary>
    /// Reads the completed call's reply with <paramref name="read"/> and gives the call back, as a generated async
    /// method does after its await: a reply that cannot be read closes its link first (<see cref="CloseOnMalformedReply"/>).
    /// </summary>
    internal T ReadReplyAndEnd<T>(Func<PendingCall, T> read)
    {
        try
        {
            return read(this);
        }
        catch (XCallProtocolException error) when (CloseOnMalformedReply(error))
        {
            throw;
        }
        finally
        {
            End();
        }
    }

    /// <summary>This call's task reply for results of type <typeparamref name="T"/>, made once and reused by later calls.</summary>
    private TaskReply<T> SpareReply<T>()
    {
        if (_spareReply is not TaskReply<T> reply)
        {
            _spareReply = reply = new TaskReply<T>();
        }
        return reply;
    }

    /// <summary>
    /// Hands the call to the drainer with <paramref name="reply"/> as what completes the caller's task: true when
    /// the caller is to await it, false when the call completed first (nobody else will touch it).
    /// </summary>
    internal bool AwaitWith(AsyncReply reply)
    {
        _completion = reply; // before the exchange that lets a completer push the call to the drainer
        if (AwaitCompletion())
        {
            return true;
        }
        _completion = null;
        return false;
    }

    /// <summary>
    /// Finishes a call without results: throws its failure or the remote error, like
    /// <see cref="GetReplyReader"/>; a reply that carries bytes is an <see cref="XCallProtocolException"/>.
    /// </summary>
    public void EndVoidReply()
    {
        if (_failure is not null || _replyKind == FrameKind.Error || _replyLength != 0)
        {
            GetReplyReader().EnsureFullyConsumed();
        }
    }

    /// <summary>
    /// The reply's reader. Raises <see cref="RemoteInvocationException"/> if the remote side threw,
    /// <see cref="XCallServerBusyException"/> if it refused the call without running it, or the failure the
    /// call completed with.
    /// </summary>
    public MarshalReader GetReplyReader()
    {
        if (_failure is not null)
        {
            throw _failure;
        }
        var reader = new MarshalReader(_reply.AsSpan(0, _replyLength), _connection.Options.Limits) { Context = _connection.ReadContextOf(Link) };
        if (_replyKind == FrameKind.Error)
        {
            RemoteInvocationException remote = RemoteError.Read(ref reader);
            reader.EnsureFullyConsumed(); // bytes after the record: a malformed frame, not the remote exception
            if (_notRun && remote.RemoteTypeName == XCallServerBusyException.WireTypeName)
            {
                // The runtime's refusal (the header's mark), one fixed name: no type is made from a name on the wire.
                throw new XCallServerBusyException(_connection.RemoteEndpoint, XCallConnection.MethodName(this), remote.RemoteMessage);
            }
            throw remote;
        }
        return reader;
    }

    void IValueTaskSource.GetResult(short token) => _core.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _core.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _core.OnCompleted(continuation, state, token, flags);
}
