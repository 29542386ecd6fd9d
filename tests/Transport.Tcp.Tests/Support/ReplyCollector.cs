using System.Collections.Concurrent;
using XCall.Marshal;

namespace XCall.Transport.Tcp.Tests.Support;

/// <summary>Client-side handler: completes one task per call id with the reply's payload, and records arrival order.</summary>
internal sealed class ReplyCollector : IFrameHandler
{
    private readonly ConcurrentDictionary<ulong, TaskCompletionSource<byte[]>> _replies = new();
    private readonly TaskCompletionSource<Exception?> _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly List<ulong> _order = [];
    private int _closeCount;

    public MarshalLimits Limits { get; init; } = MarshalLimits.Default;

    /// <summary>Record the arrival order of replies (for the pipelining test).</summary>
    public bool RecordOrder { get; init; }

    public Task<Exception?> Closed => _closed.Task;

    public int CloseCount => Volatile.Read(ref _closeCount);

    public IReadOnlyList<ulong> Order
    {
        get
        {
            lock (_order)
            {
                return [.. _order];
            }
        }
    }

    /// <summary>The reply to <paramref name="callId"/>, when it comes.</summary>
    public Task<byte[]> Reply(ulong callId) => Slot(callId).Task;

    public void Forget(ulong callId) => _replies.TryRemove(callId, out _);

    public void OnFrame(in FrameHeader header, ref MarshalReader payload)
    {
        byte[] bytes = new byte[payload.Remaining];
        payload.ReadBlock(bytes);
        if (RecordOrder)
        {
            lock (_order)
            {
                _order.Add(header.CallId);
            }
        }
        if (header.Kind == FrameKind.Reply)
        {
            Slot(header.CallId).TrySetResult(bytes);
        }
    }

    public void OnClosed(Exception? error)
    {
        Interlocked.Increment(ref _closeCount);
        _closed.TrySetResult(error);
        foreach (TaskCompletionSource<byte[]> pending in _replies.Values)
        {
            pending.TrySetException(new XCallDisconnectedException("test", "closed", error));
        }
    }

    private TaskCompletionSource<byte[]> Slot(ulong callId) =>
        _replies.GetOrAdd(callId, static _ => new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously));
}
