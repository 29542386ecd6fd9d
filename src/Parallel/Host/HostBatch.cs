using System.Buffers;

namespace XCall.Parallel.Host;

/// <summary>One batch of frames on its host, and its answer, built by the runners of its segments.</summary>
internal sealed class HostBatch(byte[] frames)
{
    // Design:
    // - _holds counts what the answer still waits for: one while the batch is split, one per segment not yet run,
    //   one per call whose reply has not come; the release that takes it to 0 completes the answer, once.
    // - _replies, _failures and _runs are written under _lock (runners of different objects add to one batch).
    private readonly object _lock = new();
    private readonly ArrayBufferWriter<byte> _replies = new();
    private readonly List<OneWayFailure> _failures = [];
    private readonly List<(string Contract, long Calls, long Nanoseconds)> _runs = [];
    private int _holds = 1;

    public byte[] Frames { get; } = frames;

    public TaskCompletionSource<BatchResult> Answer { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public void Hold(int count) => Interlocked.Add(ref _holds, count);

    public void Release()
    {
        if (Interlocked.Decrement(ref _holds) == 0)
        {
            lock (_lock)
            {
                Answer.TrySetResult(new BatchResult(
                    _replies.WrittenSpan.ToArray(), [.. _failures],
                    [.. _runs.Select(r => r.Contract)], [.. _runs.Select(r => r.Calls)], [.. _runs.Select(r => r.Nanoseconds)]));
            }
        }
    }

    public void AddReply(ReadOnlySpan<byte> record)
    {
        lock (_lock)
        {
            _replies.Write(record);
        }
        Release();
    }

    public void AddFailure(OneWayFailure failure)
    {
        lock (_lock)
        {
            _failures.Add(failure);
        }
    }

    public void AddRun(string contract, long calls, long nanoseconds)
    {
        lock (_lock)
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
    }
}
