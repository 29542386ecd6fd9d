using XCall.Transport;

namespace XCall.Parallel.Host;

/// <summary>
/// The host's end of one caller rank's tunnel: it takes the caller's batches in sequence order and splits each into
/// segments, runs of consecutive frames to one object, queued on that object's <see cref="ObjectRunner"/>.
/// </summary>
internal sealed class HostTunnel
{
    // Design:
    // - Batches are split one at a time, in sequence order: _waiting (under _lock) holds the batches that came early;
    //   whoever finds _splitting false takes the split and goes on while the next sequence is there. So the segments
    //   of one object reach its runner in the order the caller made its calls.
    // - Runners run apart from each other: a call that waits for a chain of calls which comes back to this rank blocks
    //   its own object's runner only, and the chain's call to another object of this rank runs.
    // - _runners (under _lock) has a runner for each object of this rank the caller has called; Forget drops one.
    private readonly ParallelHost _host;
    private readonly int _clientRank;
    private readonly object _lock = new();
    private readonly SortedDictionary<long, HostBatch> _waiting = [];
    private readonly Dictionary<ulong, ObjectRunner> _runners = [];
    private readonly List<(ObjectRunner Runner, int Start, int End)> _segments = [];
    private long _next;
    private bool _splitting;
    private bool _closed;

    public HostTunnel(ParallelHost host, int clientRank)
    {
        _host = host;
        _clientRank = clientRank;
    }

    public int ClientRank => _clientRank;

    /// <summary>Queues batch <paramref name="sequence"/> after every earlier one; completes when its calls ran and have their replies.</summary>
    public Task<BatchResult> RunAsync(long sequence, byte[] frames)
    {
        var batch = new HostBatch(frames);
        lock (_lock)
        {
            _waiting.Add(sequence, batch);
            if (_splitting)
            {
                return batch.Answer.Task;
            }
            _splitting = true;
        }
        ObjectRunner? inline = null;
        while (true)
        {
            HostBatch? next;
            lock (_lock)
            {
                if (!_waiting.Remove(_next, out next))
                {
                    _splitting = false;
                    break;
                }
                _next++;
            }
            inline?.Schedule(); // a later batch came: this thread goes on splitting
            inline = Split(next);
        }
        // The last segment split runs on this thread (no hop to the pool), once the split is left to others: a call
        // there that waits for a chain coming back to this rank does not hold the chain's batches up.
        inline?.Execute();
        return batch.Answer.Task;
    }

    /// <summary>
    /// Queues the segments of <paramref name="batch"/> on their runners; a batch that does not read fails alone, and
    /// nothing of it runs. Returns the runner of the last segment when it was idle: scheduled, for the caller to run.
    /// </summary>
    private ObjectRunner? Split(HostBatch batch)
    {
        _segments.Clear();
        try
        {
            ReadOnlySpan<byte> all = batch.Frames;
            ReadOnlySpan<byte> rest = all;
            ObjectRunner? runner = null;
            int start = 0;
            bool first = true;
            FrameHeader last = default;
            while (!rest.IsEmpty)
            {
                // A short record goes to the object of the record before: skipped by its length alone (one that runs
                // past the end is left to Read, which throws).
                if (!first && last.Kind == FrameKind.OneWay && FrameRecords.TryReadShort(rest, out _, out int payloadLength))
                {
                    rest = rest[(FrameRecords.ShortPrefix + payloadLength)..];
                    continue;
                }
                int offset = all.Length - rest.Length;
                FrameHeader header = FrameRecords.Read(ref rest, last, out _);
                // Aggregated calls mostly go to the object of the frame before: look the runner up when that changes.
                if (!first && header.ObjectId == last.ObjectId && header.Kind == last.Kind)
                {
                    continue;
                }
                first = false;
                last = header;
                ObjectRunner? owner = RunnerFor(header);
                if (!ReferenceEquals(owner, runner))
                {
                    if (runner is not null)
                    {
                        _segments.Add((runner, start, offset));
                    }
                    runner = owner;
                    start = offset;
                }
            }
            if (runner is not null)
            {
                _segments.Add((runner, start, all.Length));
            }
        }
        catch (Exception e)
        {
            // A batch the tunnel cannot read: its caller closes the tunnel over the error.
            batch.Answer.TrySetException(e);
            return null;
        }
        batch.Hold(_segments.Count);
        ObjectRunner? inline = null;
        for (int i = 0; i < _segments.Count; i++)
        {
            (ObjectRunner runner, int start, int end) = _segments[i];
            bool idle = runner.Enqueue(new Segment(batch, start, end), mayRunHere: i == _segments.Count - 1);
            inline = idle ? runner : null;
        }
        batch.Release(); // the hold every batch starts with
        return inline;
    }

    /// <summary>The runner of the frame's object: made at its first call; null for a control frame of an object without one (advice, dropped).</summary>
    /// <exception cref="XCallException">A call names an object this rank does not host.</exception>
    private ObjectRunner? RunnerFor(in FrameHeader header)
    {
        lock (_lock)
        {
            if (_runners.TryGetValue(header.ObjectId, out ObjectRunner? runner))
            {
                return runner;
            }
            if (header.Kind is not (FrameKind.Call or FrameKind.OneWay))
            {
                return null;
            }
            if (_closed)
            {
                throw new XCallDisconnectedException($"parallel://rank{_clientRank}", $"rank {_host.Rank} is leaving the parallel world");
            }
            HostedObject target = _host.Find(header.ObjectId) ?? _host.FindReleased(header.ObjectId)
                ?? throw new XCallException($"Rank {_host.Rank} hosts no parallel object with id {header.ObjectId}.");
            runner = new ObjectRunner(_host, _clientRank, header.ObjectId, target);
            _runners.Add(header.ObjectId, runner);
            return runner;
        }
    }

    /// <summary>Drops the runner of <paramref name="objectId"/> (the object was released); segments it holds still run.</summary>
    public void Forget(ulong objectId)
    {
        ObjectRunner? runner;
        lock (_lock)
        {
            if (!_runners.Remove(objectId, out runner))
            {
                return;
            }
        }
        runner.Retire();
    }

    public void Dispose()
    {
        ObjectRunner[] runners;
        lock (_lock)
        {
            _closed = true;
            runners = [.. _runners.Values];
            _runners.Clear();
        }
        foreach (ObjectRunner runner in runners)
        {
            runner.Retire();
        }
    }
}

/// <summary>A run of consecutive frames of a batch, <see cref="Start"/> to <see cref="End"/>, all to one object.</summary>
internal readonly record struct Segment(HostBatch Batch, int Start, int End);
