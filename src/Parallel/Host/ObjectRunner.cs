using System.Buffers;
using System.Diagnostics;
using XCall.Runtime;
using XCall.Transport;

namespace XCall.Parallel.Host;

/// <summary>
/// Runs the calls of one caller rank to one hosted object: the segments of its batches, in the order they were
/// queued, one at a time on a pool thread, through a host-side <see cref="XCallConnection"/> of its own (inline
/// dispatch) whose reply frames go to the batch that carried their call.
/// </summary>
internal sealed class ObjectRunner : FrameChannel, IBufferWriter<byte>, IThreadPoolWorkItem
{
    // Design:
    // - _queue (under itself) holds the segments not yet run; _scheduled is true from the enqueue that found the
    //   runner idle until the run finds the queue empty, so one thread at a time (a pool work item, or the thread
    //   that split the batch) runs segments, in order.
    // - _sendLock orders the frames the connection sends (a Task method may reply later, from any thread): _reply is
    //   written only under it, from BeginFrame to CommitFrame / AbortFrame.
    // - A call's reply goes to the batch recorded for its call id in _owed (under _sendLock), which holds its
    //   answer until then.
    // - _current and _currentFrame are the running segment's batch and frame, touched only by the running work item.
    private readonly ParallelHost _host;
    private readonly int _clientRank;
    private readonly HostedObject _target;
    private readonly XCallConnection _connection;
    private readonly Queue<Segment> _queue = new();
    private readonly object _sendLock = new();
    private readonly Dictionary<ulong, HostBatch> _owed = [];
    private readonly RecordBuffer _reply = new(256);
    private FrameHeader _replyHeader;
    private IFrameHandler? _handler;
    private bool _scheduled;
    private bool _retired;
    private HostBatch? _current;
    private FrameHeader _currentFrame;

    public ObjectRunner(ParallelHost host, int clientRank, ulong objectId, HostedObject target)
    {
        _host = host;
        _clientRank = clientRank;
        _target = target;
        _connection = new XCallConnection(this, new ConnectionOptions { DispatchMode = DispatchMode.Inline });
        _connection.OneWayCallFailed += OnOneWayCallFailed;
        _connection.Start();
        _connection.Expose(objectId, target.Target, target.Dispatcher);
    }

    public override string RemoteEndpoint => $"parallel://rank{_clientRank}";

    public override void Start(IFrameHandler handler) => _handler = handler;

    /// <summary>
    /// Queues <paramref name="segment"/>. When the runner was idle it is now scheduled: on the pool, or, with
    /// <paramref name="mayRunHere"/>, by the caller, which gets true and must then <see cref="Execute"/> or <see cref="Schedule"/> it.
    /// </summary>
    public bool Enqueue(Segment segment, bool mayRunHere)
    {
        lock (_queue)
        {
            _queue.Enqueue(segment);
            if (_scheduled)
            {
                return false;
            }
            _scheduled = true;
        }
        if (mayRunHere)
        {
            return true;
        }
        Schedule();
        return false;
    }

    /// <summary>Runs the scheduled runner on the pool.</summary>
    public void Schedule() => ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);

    /// <summary>Closes the connection once the queued segments ran (the object was released or the world left).</summary>
    public void Retire()
    {
        bool idle;
        lock (_queue)
        {
            _retired = true;
            idle = !_scheduled;
        }
        if (idle)
        {
            Dispose();
        }
    }

    public void Execute()
    {
        while (true)
        {
            Segment segment;
            lock (_queue)
            {
                if (!_queue.TryDequeue(out segment))
                {
                    _scheduled = false;
                    if (!_retired)
                    {
                        return;
                    }
                    break;
                }
            }
            Run(segment);
        }
        Dispose();
    }

    private void Run(Segment segment)
    {
        HostBatch batch = segment.Batch;
        ReadOnlySpan<byte> records = batch.Frames.AsSpan(segment.Start, segment.End - segment.Start);
        _current = batch;
        long start = Stopwatch.GetTimestamp();
        int calls = 0;
        try
        {
            while (!records.IsEmpty)
            {
                FrameHeader header = FrameRecords.Read(ref records, out ReadOnlySpan<byte> payload);
                if (header.Kind == FrameKind.Call)
                {
                    lock (_sendLock)
                    {
                        _owed[header.CallId] = batch;
                    }
                    batch.Hold(1);
                }
                calls += header.Kind is FrameKind.Call or FrameKind.OneWay ? 1 : 0;
                _currentFrame = header;
                var reader = new Marshal.MarshalReader(payload, _handler!.Limits);
                _handler.OnFrame(header, ref reader);
            }
            if (calls > 0)
            {
                batch.AddRun(_target.Contract, calls, (long)Stopwatch.GetElapsedTime(start).TotalNanoseconds);
            }
        }
        catch (Exception e)
        {
            // A frame the connection could not read: the caller closes its tunnel over the error.
            batch.Answer.TrySetException(e);
        }
        finally
        {
            _current = null;
        }
        batch.Release();
    }

    private void OnOneWayCallFailed(XCallConnection connection, Exception error)
    {
        FrameHeader frame = _currentFrame;
        string method = _target.Dispatcher.GetMethodName(frame.MethodId);
        _current?.AddFailure(new OneWayFailure(frame.ObjectId, method, error.GetType().FullName ?? error.GetType().Name, error.Message));
    }

    public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline)
    {
        Monitor.Enter(_sendLock);
        _replyHeader = header;
        _reply.Length = FrameRecords.Prefix;
        return this;
    }

    public override void CommitFrame()
    {
        HostBatch? owner = null;
        try
        {
            FrameRecords.WritePrefix(_reply.Written, _replyHeader, _reply.Length - FrameRecords.Prefix);
            // The caller's side calls nothing back over a tunnel (see docs/parallel.md); control frames are advice.
            if (_replyHeader.Kind is FrameKind.Reply or FrameKind.Error && _owed.Remove(_replyHeader.CallId, out owner))
            {
                owner.AddReply(_reply.Written);
            }
        }
        finally
        {
            Monitor.Exit(_sendLock);
        }
    }

    public override void AbortFrame() => Monitor.Exit(_sendLock);

    public void Advance(int count) => _reply.Advance(count);

    public Memory<byte> GetMemory(int sizeHint = 0) => _reply.GetMemory(sizeHint);

    public Span<byte> GetSpan(int sizeHint = 0) => _reply.GetSpan(sizeHint);

    public override void Dispose() => _handler?.OnClosed(null);
}
