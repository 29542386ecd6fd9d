using System.Buffers;
using System.Diagnostics;
using XCall.Runtime;
using XCall.Transport;

namespace XCall.Parallel.Host;

/// <summary>
/// The host's end of one caller rank's tunnel: a host-side <see cref="XCallConnection"/> (inline dispatch, so frames
/// run in the order they came) fed with the frames of each batch, whose reply frames are collected into the
/// answer of the batch that carried their call.
/// </summary>
internal sealed class HostTunnel : FrameChannel, IBufferWriter<byte>
{
    // Design:
    // - Batches run one at a time, in sequence order: _waiting (under _lock) holds the batches that came early;
    //   whoever finds _running false takes the run and drains every batch whose turn has come.
    // - _sendLock orders the frames this connection sends (replies may come from any thread when a method completes
    //   late): _reply is written only under it, from BeginFrame to CommitFrame / AbortFrame.
    // - A call's reply goes to the batch recorded for its call id in _owed (under _lock); a batch's answer is
    //   completed when it has run and owes no reply.
    private readonly ParallelHost _host;
    private readonly int _clientRank;
    private readonly XCallConnection _connection;
    private readonly object _lock = new();
    private readonly object _sendLock = new();
    private readonly SortedDictionary<long, Batch> _waiting = [];
    private readonly Dictionary<ulong, Batch> _owed = [];
    private readonly HashSet<ulong> _exposed = [];
    private readonly RecordBuffer _reply = new(256);
    private FrameHeader _replyHeader;
    private IFrameHandler? _handler;
    private long _next;
    private bool _running;
    private Batch? _current;
    private FrameHeader _currentFrame;

    public HostTunnel(ParallelHost host, int clientRank)
    {
        _host = host;
        _clientRank = clientRank;
        _connection = new XCallConnection(this, new ConnectionOptions { DispatchMode = DispatchMode.Inline });
        _connection.OneWayCallFailed += OnOneWayCallFailed;
        _connection.Start();
    }

    public override string RemoteEndpoint => $"parallel://rank{_clientRank}";

    public override void Start(IFrameHandler handler) => _handler = handler;

    /// <summary>Runs batch <paramref name="sequence"/> after every earlier one; completes when its calls have their replies.</summary>
    public Task<BatchResult> RunAsync(long sequence, byte[] frames)
    {
        var batch = new Batch(frames);
        lock (_lock)
        {
            _waiting.Add(sequence, batch);
            if (_running)
            {
                return batch.Answer.Task;
            }
            _running = true;
        }
        while (true)
        {
            Batch? next;
            lock (_lock)
            {
                if (!_waiting.Remove(_next, out next))
                {
                    _running = false;
                    break;
                }
                _next++;
            }
            Run(next);
        }
        return batch.Answer.Task;
    }

    private void Run(Batch batch)
    {
        ReadOnlySpan<byte> records = batch.Frames;
        _current = batch;
        string? contract = null;
        HostedObject? target = null;
        ulong lastObjectId = 0;
        long runStart = 0;
        int runCalls = 0;
        try
        {
            while (!records.IsEmpty)
            {
                FrameHeader header = FrameRecords.Read(ref records, out ReadOnlySpan<byte> payload);
                if (header.Kind is FrameKind.Call or FrameKind.OneWay)
                {
                    // Aggregated calls mostly go to the object of the frame before: look it up only when that changes.
                    if (header.ObjectId != lastObjectId || target is null)
                    {
                        target = Expose(header.ObjectId);
                        lastObjectId = header.ObjectId;
                    }
                    if (!ReferenceEquals(target.Contract, contract))
                    {
                        EndRun(batch, contract, runStart, runCalls);
                        contract = target.Contract;
                        runStart = Stopwatch.GetTimestamp();
                        runCalls = 0;
                    }
                    runCalls++;
                    if (header.Kind == FrameKind.Call)
                    {
                        lock (_lock)
                        {
                            _owed[header.CallId] = batch;
                            batch.Owed++;
                        }
                    }
                }
                _currentFrame = header;
                var reader = new Marshal.MarshalReader(payload, _handler!.Limits);
                _handler.OnFrame(header, ref reader);
            }
            EndRun(batch, contract, runStart, runCalls);
        }
        catch (Exception e)
        {
            // A frame the connection could not read: this tunnel is unusable; its caller closes it over the error.
            batch.Answer.TrySetException(e);
            return;
        }
        finally
        {
            _current = null;
        }
        bool complete;
        lock (_lock)
        {
            batch.Ran = true;
            complete = batch.Owed == 0;
        }
        if (complete)
        {
            batch.Complete();
        }
    }

    private static void EndRun(Batch batch, string? contract, long start, int calls)
    {
        if (contract is not null && calls > 0)
        {
            batch.AddRun(contract, calls, (long)Stopwatch.GetElapsedTime(start).TotalNanoseconds);
        }
    }

    private HostedObject Expose(ulong objectId)
    {
        HostedObject target = _host.Find(objectId)
            ?? throw new XCallException($"Rank {_host.Rank} hosts no parallel object with id {objectId}.");
        if (_exposed.Add(objectId))
        {
            _connection.Expose(objectId, target.Target, target.Dispatcher);
        }
        return target;
    }

    private void OnOneWayCallFailed(XCallConnection connection, Exception error)
    {
        FrameHeader frame = _currentFrame;
        string method = _host.Find(frame.ObjectId)?.Dispatcher.GetMethodName(frame.MethodId) ?? $"0x{frame.MethodId:x8}";
        _current?.Failures.Add(new OneWayFailure(frame.ObjectId, method, error.GetType().FullName ?? error.GetType().Name, error.Message));
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
        try
        {
            FrameRecords.WritePrefix(_reply.Written, _replyHeader, _reply.Length - FrameRecords.Prefix);
            if (_replyHeader.Kind is not (FrameKind.Reply or FrameKind.Error))
            {
                return; // the caller's side calls nothing back over a tunnel (see docs/parallel.md); control frames are advice
            }
            Batch? owner;
            bool complete;
            lock (_lock)
            {
                if (!_owed.Remove(_replyHeader.CallId, out owner))
                {
                    return;
                }
                owner.Replies.Write(_reply.Written);
                owner.Owed--;
                complete = owner.Ran && owner.Owed == 0;
            }
            if (complete)
            {
                owner.Complete();
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

    /// <summary>One batch of frames and its answer, built while it runs.</summary>
    private sealed class Batch(byte[] frames)
    {
        public byte[] Frames { get; } = frames;

        public TaskCompletionSource<BatchResult> Answer { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public ArrayBufferWriter<byte> Replies { get; } = new();

        public List<OneWayFailure> Failures { get; } = [];

        public int Owed { get; set; }

        public bool Ran { get; set; }

        private readonly List<(string Contract, long Calls, long Nanoseconds)> _runs = [];

        public void AddRun(string contract, long calls, long nanoseconds)
        {
            for (int i = 0; i < _runs.Count; i++)
            {
                if (ReferenceEquals(_runs[i].Contract, contract))
                {
                    _runs[i] = (contract, _runs[i].Calls + calls, _runs[i].Nanoseconds + nanoseconds);
                    return;
                }
            }
            _runs.Add((contract, calls, nanoseconds));
        }

        public void Complete() => Answer.TrySetResult(new BatchResult(
            Replies.WrittenSpan.ToArray(), [.. Failures],
            [.. _runs.Select(r => r.Contract)], [.. _runs.Select(r => r.Calls)], [.. _runs.Select(r => r.Nanoseconds)]));
    }
}
