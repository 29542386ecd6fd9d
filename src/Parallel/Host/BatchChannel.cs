using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using XCall.Transport;

namespace XCall.Parallel.Host;

/// <summary>
/// The caller's end of a tunnel to one host rank: the frames of a caller-side <see cref="Runtime.XCallConnection"/>
/// are held in a buffer and leave as one batch (<see cref="IParallelHost.ExchangeAsync"/>) when the batch reaches
/// its bound of calls or bytes, when its oldest call has waited <see cref="AggregationOptions.MaxDelay"/>, before any
/// call that expects a reply, and on <see cref="Flush"/>.
/// </summary>
internal sealed class BatchChannel : FrameChannel, IBufferWriter<byte>
{
    // Design:
    // - The send side belongs to one thread at a time: _owner holds its managed thread id from BeginFrame to
    //   CommitFrame / AbortFrame (the timer takes it with -1 to flush). Only the owner touches _bytes, _length,
    //   _frameStart, _open, _held, _heldObjects and starts batches, so batches start in frame order with increasing
    //   sequences. Nothing else is locked.
    // - A caller thread keeps the send side parked between its frames (_parked, a Parker of its own made for this
    //   parking; _owner its id), so its next one-way call takes it without an interlocked operation: it stores the
    //   parker's Busy = 1, then reads _revoke and _parked; it gives it back with Busy = 0. Another thread (or the
    //   timer) steals a parked side under _stealLock: it stores _revoke = 1, makes every thread of the process pass
    //   a full barrier (Interlocked.MemoryBarrierProcessWide), so the owner either sees _revoke or has its Busy = 1
    //   seen, waits until that parker's Busy is 0, then clears _parked, takes _owner, and clears _revoke last. A
    //   parked owner that does not see _revoke = 1 (it read _revoke after the steal ended) sees _parked changed (read
    //   after _revoke, in order) and backs off. Each parking has its own Busy flag, so a thread that backs off late
    //   clears only the flag of a parking that is over, never the current holder's. After MaxSteals steals by other
    //   caller threads the tunnel parks no more (one CAS and one store per call).
    // - _holding is the parker the holder took the side through (give back with its Busy = 0), or null (the holder
    //   took _owner: park it, or release _owner). A holder's own Busy = 1 makes a nested frame on its thread fail.
    // - _last is the header of the last full record committed; while _held > 0 the buffer ends with a one-way record
    //   whose header equals _last but for its method, so a one-way call that FrameRecords.MayShorten after it is
    //   written as a short record (_openShort).
    //   Nobody waits while owning it: a chain of calls that comes back to this rank may need to send here meanwhile.
    // - A batch carries either one-way calls only, or one frame of another kind alone (a call first sends the held
    //   one-way calls as their own batch).
    // - _inFlight (under _resultsLock) lists the unanswered one-way batches and the objects they carry. Each answer
    //   is applied when it comes, in any order (the host keeps each object's order): failures are recorded before
    //   the batch leaves _inFlight, and its Applied task completes after.
    // - A call to an object first waits (not owning the send side) until no batch in flight carries that object: it
    //   sees their effects, and a one-way failure on the object fails it before it is sent. It waits for no other
    //   object's batch, so a call blocked on a chain elsewhere does not block it.
    // - After its one-way batch left, a sender waits while MaxInFlight batches in flight carry one of its objects.
    // - Answers are delivered to the handler one at a time (_deliverLock).
    // - Once _closed is set it stays; every later BeginFrame throws it. A failed batch sets it: to the send
    //   delegate's own XCallDisconnectedException when that names this tunnel's endpoint (the delegate described the
    //   loss already, as Close would), else to a disconnection over the batch's error.
    private const int MaxInFlight = 16;
    private const int MaxSteals = 8;
    private readonly Func<long, byte[], Task<BatchResult>> _send;
    private readonly AggregationOptions _aggregation;
    private readonly ParallelMeasurements _measurements;
    private readonly Action<OneWayCallFailedException> _onOneWayFailure;
    private readonly string _endpoint;
    private readonly string _host;
    private readonly int _maxCalls;
    private readonly int _maxBytes;
    private byte[] _bytes;
    private int _length;
    private readonly object _resultsLock = new();
    private readonly object _deliverLock = new();
    private readonly List<OneWayBatch> _inFlight = [];
    private readonly List<ulong> _heldObjects = [];
    private readonly Dictionary<ulong, OneWayCallFailedException> _failures = [];
    private readonly Timer _timer;
    private IFrameHandler? _handler;
    private int _owner;
    private Parker? _parked;
    private Parker? _holding;
    private int _revoke;
    private int _steals;
    private readonly object _stealLock = new();
    private int _frameStart = -1;
    private FrameHeader _open;
    private FrameHeader _last;
    private bool _openShort;
    private int _held;
    private ulong _lastHeldObject;
    private long _nextSequence;
    private XCallDisconnectedException? _closed;

    public BatchChannel(string endpoint, string host, Func<long, byte[], Task<BatchResult>> send, AggregationOptions aggregation,
        ParallelMeasurements measurements, Action<OneWayCallFailedException> onOneWayFailure)
    {
        _endpoint = endpoint;
        _host = host;
        _send = send;
        _aggregation = aggregation;
        _measurements = measurements;
        _onOneWayFailure = onOneWayFailure;
        _maxCalls = aggregation.MaxCalls;
        _maxBytes = aggregation.MaxBytes;
        _bytes = new byte[Math.Min(aggregation.MaxBytes + 1024, 1 << 20)];
        _timer = new Timer(static state => ((BatchChannel)state!).OnTimer(), this, Timeout.Infinite, Timeout.Infinite);
    }

    public override string RemoteEndpoint => _endpoint;

    public override void Start(IFrameHandler handler) => _handler = handler;

    public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline)
    {
        // The common case: a one-way call, the send side parked by this thread (or free), the tunnel open, room for
        // the record's prefix.
        if (header.Kind == FrameKind.OneWay)
        {
            int me = Environment.CurrentManagedThreadId;
            bool taken = TakeParked(me);
            if (!taken && Interlocked.CompareExchange(ref _owner, me, 0) == 0)
            {
                _holding = null;
                taken = true;
            }
            if (taken)
            {
                if (Volatile.Read(ref _closed) is null && _bytes.Length - _length >= FrameRecords.Prefix)
                {
                    Open(header);
                    return this;
                }
                ReleaseSendSide();
            }
        }
        return BeginFrameSlow(header);
    }

    /// <summary>Takes the send side when thread <paramref name="me"/> has it parked and no steal is under way (no interlocked operation).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TakeParked(int me)
    {
        Parker? parker = Volatile.Read(ref _parked);
        if (parker is null || parker.ThreadId != me || parker.Busy != 0 || _frameStart >= 0)
        {
            return false; // not parked by this thread, or held by it already (a nested frame)
        }
        Volatile.Write(ref parker.Busy, 1);
        // A thief's process-wide barrier orders this store before its read of Busy, or this read after its _revoke = 1.
        if (Volatile.Read(ref _revoke) == 0 && Volatile.Read(ref _parked) == parker)
        {
            _holding = parker;
            return true;
        }
        Volatile.Write(ref parker.Busy, 0);
        return false;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private IBufferWriter<byte> BeginFrameSlow(in FrameHeader header)
    {
        if (header.Kind != FrameKind.OneWay)
        {
            // A call sees every earlier one-way call's effect, and fails with a one-way failure of its object.
            SendHeld();
            if (header.Kind == FrameKind.Call)
            {
                WaitForObject(header.ObjectId, 1);
                ThrowIfClosed();
                if (TakeFailure(header.ObjectId) is { } failure)
                {
                    throw failure;
                }
            }
        }
        TakeSendSide();
        try
        {
            ThrowIfClosed();
            if (header.Kind != FrameKind.OneWay)
            {
                SendHeldUnsynchronized(); // other threads' one-way calls held meanwhile: the call leaves alone
            }
            Ensure(FrameRecords.Prefix);
            Open(header);
            return this;
        }
        catch
        {
            ReleaseSendSide();
            throw;
        }
    }

    /// <summary>Starts the record of <paramref name="header"/> at the end of the buffer (room for a full prefix is there).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Open(in FrameHeader header)
    {
        _open = header;
        _openShort = _held != 0 && FrameRecords.MayShorten(header, _last);
        _frameStart = _length;
        _length += _openShort ? FrameRecords.ShortPrefix : FrameRecords.Prefix;
    }

    public override void CommitFrame()
    {
        if (_openShort)
        {
            // BeginFrame reserved the prefix's bytes at _frameStart (the buffer only grows): no bounds check needed.
            FrameRecords.WriteShortPrefix(ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_bytes), _frameStart),
                _open.MethodId, _length - _frameStart - FrameRecords.ShortPrefix);
            _frameStart = -1;
            // The common case: one more one-way call to the object of the one before, the batch below its bounds.
            if (_held < _maxCalls - 1 && _length < _maxBytes)
            {
                _held++;
                ReleaseSendSide();
                return;
            }
        }
        else
        {
            FrameRecords.WritePrefix(_bytes.AsSpan(_frameStart), _open, _length - _frameStart - FrameRecords.Prefix);
            _last = _open;
            _frameStart = -1;
        }
        CommitFrameSlow();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void CommitFrameSlow()
    {
        OneWayBatch? full = null;
        try
        {
            if (_open.Kind != FrameKind.OneWay)
            {
                SendHeldUnsynchronized(oneWay: false);
                return;
            }
            if (_held == 0 || _open.ObjectId != _lastHeldObject)
            {
                NoteHeldObject(_open.ObjectId);
            }
            if (++_held == 1 && _aggregation.MaxDelay > TimeSpan.Zero)
            {
                try
                {
                    _timer.Change(_aggregation.MaxDelay, Timeout.InfiniteTimeSpan);
                }
                catch (ObjectDisposedException)
                {
                    ThrowIfClosed(); // closed meanwhile (Close disposes the timer): the caller hears why
                    throw;
                }
            }
            if (_held >= _maxCalls || _length >= _maxBytes)
            {
                full = SendHeldUnsynchronized();
            }
        }
        finally
        {
            ReleaseSendSide();
        }
        if (full is not null)
        {
            // Back-pressure, not owning the send side.
            foreach (ulong objectId in full.Objects)
            {
                WaitForObject(objectId, MaxInFlight);
            }
        }
    }

    public override void AbortFrame()
    {
        if (_frameStart >= 0)
        {
            _length = _frameStart;
            _frameStart = -1;
        }
        ReleaseSendSide();
    }

    public void Advance(int count) => _length += count;

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _bytes.AsMemory(_length);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        if (_bytes.Length - _length < Math.Max(sizeHint, 1))
        {
            Ensure(sizeHint);
        }
        return _bytes.AsSpan(_length);
    }

    /// <summary>Grows the buffer to hold <paramref name="sizeHint"/> (at least 1) more bytes.</summary>
    private void Ensure(int sizeHint)
    {
        int need = _length + Math.Max(sizeHint, 1);
        if (need > _bytes.Length)
        {
            Array.Resize(ref _bytes, Math.Max(need, _bytes.Length * 2));
        }
    }

    /// <summary>
    /// Sends the held one-way calls and waits until the host ran every one-way batch sent so far (calls that expect
    /// a reply are waited for by their callers).
    /// </summary>
    /// <exception cref="XCallDisconnectedException">The tunnel is closed (its host failed).</exception>
    public void Flush()
    {
        SendHeld();
        while (true)
        {
            Task applied;
            lock (_resultsLock)
            {
                if (_inFlight.Count == 0)
                {
                    break;
                }
                applied = _inFlight[0].Applied;
            }
            applied.Wait();
        }
        ThrowIfClosed();
    }

    /// <summary>Closes the tunnel over <paramref name="error"/>: calls in flight and later ones fail with it.</summary>
    public void Close(XCallDisconnectedException error)
    {
        IFrameHandler? handler;
        lock (_resultsLock)
        {
            if (_closed is not null)
            {
                return;
            }
            _closed = error;
            handler = _handler;
        }
        _timer.Dispose();
        handler?.OnClosed(error);
    }

    public override void Dispose() => Close(new XCallDisconnectedException(_endpoint, "the parallel world was left"));

    private void TakeSendSide()
    {
        int me = Environment.CurrentManagedThreadId;
        var spin = new SpinWait();
        while (true)
        {
            if (Interlocked.CompareExchange(ref _owner, me, 0) == 0)
            {
                _holding = null;
                return;
            }
            int owner = Volatile.Read(ref _owner);
            if (owner == me)
            {
                if (TakeParked(me))
                {
                    return;
                }
                // This thread holds the side (a frame open, or a send under way that called back into it) when its own
                // parker is busy (only this thread sets its Busy, and clears it before it leaves TakeParked or the
                // side), even while a thief waits for that Busy; or when it took _owner itself: _owner names it, the
                // side is not parked idle, and no steal is under way (a steal ends with _owner the thief's, before
                // _revoke = 0).
                Parker? parker = Volatile.Read(ref _parked);
                bool mine = parker is not null && parker.ThreadId == me;
                bool parkedIdle = mine && parker!.Busy == 0 && _frameStart < 0;
                if ((mine && parker!.Busy != 0) || (!parkedIdle && Volatile.Read(ref _revoke) == 0 && Volatile.Read(ref _owner) == me))
                {
                    throw FrameAlreadyOpen(_endpoint);
                }
            }
            else if (Volatile.Read(ref _parked) is not null && TrySteal(owner, me, wait: true))
            {
                return;
            }
            spin.SpinOnce(sleep1Threshold: -1);
        }
    }

    /// <summary>
    /// Takes the send side from thread <paramref name="victim"/>, which has it parked, for <paramref name="thief"/>
    /// (-1: the timer); with <paramref name="wait"/>, waits for the victim's open frame to be committed, else gives
    /// up on it. False when the side was not parked by the victim any more.
    /// </summary>
    private bool TrySteal(int victim, int thief, bool wait)
    {
        lock (_stealLock)
        {
            Parker? parker = Volatile.Read(ref _parked);
            if (parker is null || parker.ThreadId != victim || Volatile.Read(ref _owner) != victim)
            {
                return false;
            }
            Volatile.Write(ref _revoke, 1);
            try
            {
                Interlocked.MemoryBarrierProcessWide();
                var spin = new SpinWait();
                while (Volatile.Read(ref parker.Busy) != 0)
                {
                    if (!wait)
                    {
                        return false;
                    }
                    spin.SpinOnce(sleep1Threshold: -1);
                }
                if (Volatile.Read(ref _parked) != parker)
                {
                    return false;
                }
                Volatile.Write(ref _parked, null);
                Volatile.Write(ref _owner, thief);
                _holding = null;
                if (thief > 0)
                {
                    _steals++;
                }
                return true;
            }
            finally
            {
                Volatile.Write(ref _revoke, 0);
            }
        }
    }

    /// <summary>Gives the send side back: parked for a caller thread (while no other caller thread stole it often), else free.</summary>
    private void ReleaseSendSide()
    {
        if (_holding is { } parker)
        {
            _holding = null; // before Busy = 0: from then on a thief may take the side and set its own
            Volatile.Write(ref parker.Busy, 0);
        }
        else if (_steals < MaxSteals && Volatile.Read(ref _owner) is > 0 and var owner)
        {
            Volatile.Write(ref _parked, new Parker(owner)); // Busy 0: a thief may take it from here
        }
        else
        {
            Volatile.Write(ref _owner, 0);
        }
    }

    private void SendHeld()
    {
        TakeSendSide();
        try
        {
            ThrowIfClosed();
            SendHeldUnsynchronized();
        }
        finally
        {
            ReleaseSendSide();
        }
    }

    private void OnTimer()
    {
        int owner = Interlocked.CompareExchange(ref _owner, -1, 0);
        if (owner != 0 && !(Volatile.Read(ref _parked) is not null && TrySteal(owner, -1, wait: false)))
        {
            // The owner flushes on its own bound, or commits a frame that re-arms the timer; try again shortly.
            if (_held > 0 && _closed is null)
            {
                try
                {
                    _timer.Change(_aggregation.MaxDelay, Timeout.InfiniteTimeSpan);
                }
                catch (ObjectDisposedException)
                {
                }
            }
            return;
        }
        try
        {
            if (_closed is null)
            {
                SendHeldUnsynchronized();
            }
        }
        catch (XCallException)
        {
            // The tunnel closed over it; its callers see that at their next call.
        }
        finally
        {
            ReleaseSendSide();
        }
    }

    private void NoteHeldObject(ulong objectId)
    {
        _lastHeldObject = objectId;
        if (!_heldObjects.Contains(objectId))
        {
            _heldObjects.Add(objectId);
        }
    }

    /// <summary>Sends what the buffer holds as one batch; returns it when it carried one-way calls.</summary>
    private OneWayBatch? SendHeldUnsynchronized(bool oneWay = true)
    {
        if (_length == 0)
        {
            return null;
        }
        byte[] frames = _bytes.AsSpan(0, _length).ToArray();
        _length = 0;
        _held = 0;
        Task<BatchResult> sent;
        try
        {
            sent = _send(_nextSequence++, frames);
        }
        catch (Exception e)
        {
            sent = Task.FromException<BatchResult>(e);
        }
        if (!oneWay)
        {
            sent.ContinueWith(static (done, state) => ((BatchChannel)state!).Apply(done, null), this, CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            return null;
        }
        var batch = new OneWayBatch([.. _heldObjects]);
        _heldObjects.Clear();
        lock (_resultsLock)
        {
            _inFlight.Add(batch);
        }
        sent.ContinueWith(static (done, state) =>
        {
            var (channel, batch) = ((BatchChannel, OneWayBatch))state!;
            channel.Apply(done, batch);
        }, (this, batch), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        return batch;
    }

    /// <summary>Waits while <paramref name="atMost"/> or more one-way batches in flight carry <paramref name="objectId"/>.</summary>
    private void WaitForObject(ulong objectId, int atMost)
    {
        while (true)
        {
            Task? oldest = null;
            int count = 0;
            lock (_resultsLock)
            {
                foreach (OneWayBatch batch in _inFlight)
                {
                    if (Array.IndexOf(batch.Objects, objectId) >= 0)
                    {
                        oldest ??= batch.Applied;
                        count++;
                    }
                }
            }
            if (count < atMost || oldest is null)
            {
                return;
            }
            oldest.Wait();
        }
    }

    /// <summary>Applies the answer of one batch: measurements, one-way failures, replies; a failed batch closes the tunnel.</summary>
    private void Apply(Task<BatchResult> done, OneWayBatch? batch)
    {
        List<OneWayCallFailedException>? failed = null;
        XCallDisconnectedException? closeNow = null;
        try
        {
            if (done.IsCompletedSuccessfully)
            {
                BatchResult result = done.Result;
                _measurements.AddHostTime(result.Contracts, result.Calls, result.Nanoseconds);
                if (result.Failures.Length > 0)
                {
                    lock (_resultsLock)
                    {
                        foreach (OneWayFailure failure in result.Failures)
                        {
                            var exception = new OneWayCallFailedException(failure.ObjectId, failure.Method, failure.ExceptionType, failure.Message);
                            _failures.TryAdd(failure.ObjectId, exception);
                            (failed ??= []).Add(exception);
                        }
                    }
                }
                if (result.Replies.Length > 0 && _handler is { } handler)
                {
                    lock (_deliverLock)
                    {
                        FrameRecords.Deliver(result.Replies, handler);
                    }
                }
            }
            else
            {
                lock (_resultsLock)
                {
                    if (_closed is null)
                    {
                        Exception error = done.Exception?.GetBaseException() ?? new OperationCanceledException();
                        _closed = error is XCallDisconnectedException own && own.Endpoint == _endpoint
                            ? own
                            : new XCallDisconnectedException(_endpoint, $"{_host}, which hosts the object, is gone or failed a batch ({Reason(error)})", error);
                        closeNow = _closed;
                    }
                }
            }
        }
        finally
        {
            if (batch is not null)
            {
                lock (_resultsLock)
                {
                    _inFlight.Remove(batch);
                }
                batch.SetApplied();
            }
        }
        if (closeNow is not null)
        {
            // Results of later batches will not come; the handler fails the calls that wait for them.
            _timer.Dispose();
            _handler?.OnClosed(closeNow);
        }
        foreach (OneWayCallFailedException failure in failed ?? [])
        {
            _onOneWayFailure(failure);
        }
    }

    private OneWayCallFailedException? TakeFailure(ulong objectId)
    {
        lock (_resultsLock)
        {
            return _failures.Remove(objectId, out OneWayCallFailedException? failure) ? failure : null;
        }
    }

    private static string Reason(Exception error) => error is XCallDisconnectedException lost ? lost.Reason : error.Message;

    private void ThrowIfClosed()
    {
        XCallDisconnectedException? closed = Volatile.Read(ref _closed);
        if (closed is not null)
        {
            throw closed.Copy();
        }
    }

    /// <summary>An unanswered batch of one-way calls: the objects it carries, and the task that completes once its answer was applied.</summary>
    private sealed class OneWayBatch(ulong[] objects)
    {
        public ulong[] Objects { get; } = objects;

        private readonly TaskCompletionSource _applied = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task Applied => _applied.Task;

        public void SetApplied() => _applied.TrySetResult();
    }

    /// <summary>One parking of the send side by a caller thread: its busy flag, shared with no other parking.</summary>
    private sealed class Parker(int threadId)
    {
        public readonly int ThreadId = threadId;
        public int Busy;
    }
}
