using System.Buffers;
using System.Diagnostics;
using XCall.Runtime;
using XCall.Runtime.CompilerServices;
using XCall.Transport;

namespace XCall.Parallel.Host;

/// <summary>
/// Runs the calls of one caller rank to one hosted object: the segments of its batches, in the order they were
/// queued, one at a time on a pool thread, through a host-side <see cref="XCallConnection"/> of its own (inline
/// dispatch) whose reply frames go to the batch that carried their call. A run of consecutive one-way frames goes
/// to the connection once: its first frame does, and the object's <see cref="RunDispatcher"/> dispatches the rest
/// in a loop inside that dispatch (<see cref="DispatchRest"/>).
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
    // - _current, _currentFrame (the last full record's header; _currentMethod is the running frame's method), _frames,
    //   _next, _end and _ran are the running segment's batch, frame, bytes, next frame's offset, end and count of calls
    //   run, touched only by the running work item (and the dispatch it makes).
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
    private uint _currentMethod;
    private byte[] _frames = [];
    private int _next;
    private int _end;
    private int _ran;

    public ObjectRunner(ParallelHost host, int clientRank, ulong objectId, HostedObject target)
    {
        _host = host;
        _clientRank = clientRank;
        _target = target;
        _connection = new XCallConnection(this, new ConnectionOptions { DispatchMode = DispatchMode.Inline });
        _connection.OneWayCallFailed += OnOneWayCallFailed;
        _connection.Start();
        _connection.Expose(objectId, target.Target, new RunDispatcher(this, target.Dispatcher));
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
        _current = batch;
        _frames = batch.Frames;
        _next = segment.Start;
        _end = segment.End;
        _ran = 0;
        _currentFrame = default; // a segment starts with a full record
        long start = Stopwatch.GetTimestamp();
        try
        {
            while (_next < _end)
            {
                ReadOnlySpan<byte> records = _frames.AsSpan(_next, _end - _next);
                FrameHeader header = FrameRecords.Read(ref records, _currentFrame, out ReadOnlySpan<byte> payload);
                _next = _end - records.Length;
                if (header.Kind == FrameKind.Call)
                {
                    lock (_sendLock)
                    {
                        _owed[header.CallId] = batch;
                    }
                    batch.Hold(1);
                }
                _ran += header.Kind is FrameKind.Call or FrameKind.OneWay ? 1 : 0;
                _currentFrame = header;
                _currentMethod = header.MethodId;
                var reader = new Marshal.MarshalReader(payload, _handler!.Limits);
                _handler.OnFrame(header, ref reader);
            }
            if (_ran > 0)
            {
                batch.AddRun(_target.Contract, _ran, (long)Stopwatch.GetElapsedTime(start).TotalNanoseconds);
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
            _frames = [];
        }
        batch.Release();
    }

    /// <summary>
    /// Dispatches the one-way frames that follow the one the connection is dispatching now (the first of a run), in
    /// a loop, under that frame's <paramref name="call"/>: no lookup, no pooled call, no thread-state change per
    /// frame. Stops at the first frame of another kind (<see cref="Run"/> hands it to the connection) and at a call
    /// that does not complete synchronously (returned, for the connection to await). A call that throws ends the
    /// loop: the connection reports it as the one-way failure of <see cref="_currentFrame"/>, and <see cref="Run"/>
    /// goes on with the frame after it.
    /// </summary>
    internal ValueTask DispatchRest(Dispatcher dispatcher, object target, object? context, ServerCall call)
    {
        ulong objectId = _currentFrame.ObjectId;
        Marshal.MarshalLimits limits = _handler!.Limits;
        byte[] frames = _frames;
        while (_next < _end)
        {
            scoped ReadOnlySpan<byte> payload;
            ReadOnlySpan<byte> records;
            if (_currentFrame.Flags == 0 && _currentFrame.Version == FrameHeader.CurrentVersion
                && FrameRecords.TryReadShort(new ReadOnlySpan<byte>(frames, _next, _end - _next), out uint method, out int length))
            {
                // A short record: the header of the frame before (checked below, or by the connection) with its own
                // method; read in place, without copying a header.
                _currentMethod = method;
                payload = new ReadOnlySpan<byte>(frames, _next + FrameRecords.ShortPrefix, length);
                _next += FrameRecords.ShortPrefix + length;
            }
            else
            {
                records = frames.AsSpan(_next, _end - _next);
                FrameHeader header = FrameRecords.Read(ref records, _currentFrame, out payload);
                if (header.Kind != FrameKind.OneWay || header.Flags != 0 || header.Version != FrameHeader.CurrentVersion || header.ObjectId != objectId)
                {
                    break;
                }
                _next = _end - records.Length;
                _currentFrame = header;
                _currentMethod = header.MethodId;
            }
            _ran++;
            var reader = new Marshal.MarshalReader(payload, limits) { Context = context };
            ValueTask pending = dispatcher.Dispatch(target, _currentMethod, ref reader, call);
            if (!pending.IsCompletedSuccessfully)
            {
                return pending;
            }
        }
        return default;
    }

    /// <summary>Whether the frame the connection dispatches now is a one-way call, which may start a run.</summary>
    internal bool DispatchingOneWay => _currentFrame.Kind == FrameKind.OneWay;

    private void OnOneWayCallFailed(XCallConnection connection, Exception error)
    {
        FrameHeader frame = _currentFrame;
        string method = _target.Dispatcher.GetMethodName(_currentMethod);
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
