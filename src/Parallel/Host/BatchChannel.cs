using System.Buffers;
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
    //   CommitFrame / AbortFrame (the timer takes it with -1 to flush). Only the owner touches _buffer, _frameStart,
    //   _open, _held and starts batches, so batches start in frame order and carry increasing sequences.
    // - At most MaxInFlight batches are unanswered; a new batch first waits for the oldest.
    // - _inFlight (under _resultsLock) lists the unanswered batches in sequence order; results are applied only
    //   from its head, so replies, failures and measurements are taken in the order the host ran the batches.
    // - A call (any frame but one-way) first sends the held one-way calls and waits for every batch's result, so
    //   the call sees their effects and a one-way failure on its object fails it before it is sent.
    // - Once _closed is set it stays; every later BeginFrame throws it.
    private const int MaxInFlight = 4;
    private readonly Func<long, byte[], Task<BatchResult>> _send;
    private readonly AggregationOptions _aggregation;
    private readonly ParallelMeasurements _measurements;
    private readonly Action<OneWayCallFailedException> _onOneWayFailure;
    private readonly string _endpoint;
    private readonly string _host;
    private readonly RecordBuffer _buffer;
    private readonly object _resultsLock = new();
    private readonly Queue<Task<BatchResult>> _inFlight = new();
    private readonly Dictionary<ulong, OneWayCallFailedException> _failures = [];
    private readonly Timer _timer;
    private IFrameHandler? _handler;
    private int _owner;
    private int _frameStart = -1;
    private FrameHeader _open;
    private int _held;
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
        _buffer = new RecordBuffer(Math.Min(aggregation.MaxBytes + 1024, 1 << 20));
        _timer = new Timer(static state => ((BatchChannel)state!).OnTimer(), this, Timeout.Infinite, Timeout.Infinite);
    }

    public override string RemoteEndpoint => _endpoint;

    public override void Start(IFrameHandler handler) => _handler = handler;

    public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline)
    {
        TakeSendSide();
        try
        {
            ThrowIfClosed();
            if (header.Kind != FrameKind.OneWay)
            {
                // A call sees every earlier one-way call's effect, and fails with a one-way failure of its object.
                SendHeldUnsynchronized();
                WaitForAllUnsynchronized();
                ThrowIfClosed();
                if (header.Kind == FrameKind.Call && TakeFailure(header.ObjectId) is { } failure)
                {
                    throw failure;
                }
            }
            _open = header;
            _frameStart = _buffer.Reserve(FrameRecords.Prefix);
            return this;
        }
        catch
        {
            ReleaseSendSide();
            throw;
        }
    }

    public override void CommitFrame()
    {
        try
        {
            int payload = _buffer.Length - _frameStart - FrameRecords.Prefix;
            FrameRecords.WritePrefix(_buffer.Written[_frameStart..], _open, payload);
            _frameStart = -1;
            if (_open.Kind != FrameKind.OneWay)
            {
                SendHeldUnsynchronized();
                return;
            }
            if (++_held == 1)
            {
                if (_aggregation.MaxDelay > TimeSpan.Zero)
                {
                    _timer.Change(_aggregation.MaxDelay, Timeout.InfiniteTimeSpan);
                }
            }
            if (_held >= _aggregation.MaxCalls || _buffer.Length >= _aggregation.MaxBytes)
            {
                SendHeldUnsynchronized();
            }
        }
        finally
        {
            ReleaseSendSide();
        }
    }

    public override void AbortFrame()
    {
        if (_frameStart >= 0)
        {
            _buffer.Length = _frameStart;
            _frameStart = -1;
        }
        ReleaseSendSide();
    }

    public void Advance(int count) => _buffer.Advance(count);

    public Memory<byte> GetMemory(int sizeHint = 0) => _buffer.GetMemory(sizeHint);

    public Span<byte> GetSpan(int sizeHint = 0) => _buffer.GetSpan(sizeHint);

    /// <summary>Sends the held one-way calls and waits until the host ran every batch sent so far.</summary>
    /// <exception cref="XCallDisconnectedException">The tunnel is closed (its host failed).</exception>
    public void Flush()
    {
        TakeSendSide();
        try
        {
            ThrowIfClosed();
            SendHeldUnsynchronized();
            WaitForAllUnsynchronized();
            ThrowIfClosed();
        }
        finally
        {
            ReleaseSendSide();
        }
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
        if (Interlocked.CompareExchange(ref _owner, me, 0) == 0)
        {
            return;
        }
        if (Volatile.Read(ref _owner) == me)
        {
            throw FrameAlreadyOpen(_endpoint);
        }
        var spin = new SpinWait();
        while (Interlocked.CompareExchange(ref _owner, me, 0) != 0)
        {
            spin.SpinOnce(sleep1Threshold: -1);
        }
    }

    private void ReleaseSendSide() => Volatile.Write(ref _owner, 0);

    private void OnTimer()
    {
        if (Interlocked.CompareExchange(ref _owner, -1, 0) != 0)
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

    private void SendHeldUnsynchronized()
    {
        if (_buffer.Length == 0)
        {
            return;
        }
        byte[] frames = _buffer.ToArray();
        _buffer.Length = 0;
        _held = 0;
        while (true)
        {
            Task<BatchResult> oldest;
            lock (_resultsLock)
            {
                if (_inFlight.Count < MaxInFlight)
                {
                    break;
                }
                oldest = _inFlight.Peek();
            }
            Wait(oldest);
        }
        Task<BatchResult> sent;
        try
        {
            sent = _send(_nextSequence++, frames);
        }
        catch (Exception e)
        {
            sent = Task.FromException<BatchResult>(e);
        }
        lock (_resultsLock)
        {
            _inFlight.Enqueue(sent);
        }
        sent.ContinueWith(static (_, state) => ((BatchChannel)state!).ApplyResults(), this, CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    private void WaitForAllUnsynchronized()
    {
        while (true)
        {
            Task<BatchResult> last;
            lock (_resultsLock)
            {
                if (_inFlight.Count == 0)
                {
                    return;
                }
                last = _inFlight.Peek();
            }
            Wait(last);
        }
    }

    private void Wait(Task<BatchResult> batch)
    {
        ((IAsyncResult)batch).AsyncWaitHandle.WaitOne();
        ApplyResults();
    }

    /// <summary>Applies the results of the answered batches at the head of <see cref="_inFlight"/>, in order.</summary>
    private void ApplyResults()
    {
        List<OneWayCallFailedException>? failed = null;
        XCallDisconnectedException? closeNow = null;
        lock (_resultsLock)
        {
            while (_inFlight.Count > 0 && _inFlight.Peek().IsCompleted)
            {
                Task<BatchResult> done = _inFlight.Dequeue();
                if (done.IsCompletedSuccessfully)
                {
                    Apply(done.Result, ref failed);
                }
                else if (_closed is null)
                {
                    Exception error = done.Exception?.GetBaseException() ?? new OperationCanceledException();
                    string why = error is XCallDisconnectedException lost ? lost.Reason : error.Message;
                    _closed = new XCallDisconnectedException(_endpoint, $"{_host}, which hosts the object, is gone or failed a batch ({why})", error);
                    closeNow = _closed;
                }
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

    private void Apply(BatchResult result, ref List<OneWayCallFailedException>? failed)
    {
        _measurements.AddHostTime(result.Contracts, result.Calls, result.Nanoseconds);
        foreach (OneWayFailure failure in result.Failures)
        {
            var exception = new OneWayCallFailedException(failure.ObjectId, failure.Method, failure.ExceptionType, failure.Message);
            _failures.TryAdd(failure.ObjectId, exception);
            (failed ??= []).Add(exception);
        }
        if (result.Replies.Length > 0 && _handler is { } handler)
        {
            FrameRecords.Deliver(result.Replies, handler);
        }
    }

    private OneWayCallFailedException? TakeFailure(ulong objectId)
    {
        lock (_resultsLock)
        {
            return _failures.Remove(objectId, out OneWayCallFailedException? failure) ? failure : null;
        }
    }

    private void ThrowIfClosed()
    {
        XCallDisconnectedException? closed = Volatile.Read(ref _closed);
        if (closed is not null)
        {
            throw closed.Copy();
        }
    }
}
