using System.Diagnostics;
using System.Runtime.InteropServices;
using XCall.Runtime;
using XCall.Communicator.Eager;
using XCall.Transport;

namespace XCall.Communicator;

/// <summary>
/// A receive posted to the <see cref="Mailbox"/>: what it accepts, where the message goes, and its completion,
/// waited on by a blocking receive or awaited as a task. A blocking receive reads the connection its message comes
/// over on its own thread while it waits (<see cref="XCallConnection.WaitReceiving(IReplyWait, TimeSpan)"/>), so the message's call runs
/// there and completes the request with no hand-off between threads; where it cannot, it spins, then sleeps.
/// </summary>
internal abstract class ReceiveRequest : IReplyWait
{
    // Design: the mailbox hands a request at most one message, on one thread, and calls Complete or Fail once;
    // _done is written last, then a full fence, then _sleepers is read: a waiter counts itself in _sleepers under
    // _gate (an interlocked increment, a full fence) before it reads _done and sleeps in Monitor.Wait, so either the
    // completer sees the sleeper and pulses under _gate, or the sleeper sees _done (a Dekker pair). A completion
    // with no sleeper takes no lock. The task (async receives) completes after.
    private static readonly long s_spinTicks = Stopwatch.Frequency / 20_000; // 50 µs of spinning before sleeping

    private readonly object _gate = new();
    private readonly TaskCompletionSource<MessageStatus>? _task;
    private volatile bool _done;
    private int _sleepers;
    private MessageStatus _status;
    private Exception? _error;
    protected ReceiveRequest(int source, long context, int tag, bool asynchronous)
    {
        Source = source;
        Context = context;
        Tag = tag;
        if (asynchronous)
        {
            _task = new TaskCompletionSource<MessageStatus>(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }

    /// <summary>The world rank it accepts, or <see cref="Communicator.AnySource"/>.</summary>
    public int Source { get; }

    public long Context { get; }

    /// <summary>The tag it accepts, or <see cref="Communicator.AnyTag"/>.</summary>
    public int Tag { get; }

    /// <summary>Whether the receive was started asynchronously (it has a task).</summary>
    public bool IsAsync => _task is not null;

    /// <summary>Whether the receive completed or failed.</summary>
    public bool IsDone => _done;

    /// <summary>The eager inbox whose sleeping reader a completion from another thread wakes; null when none.</summary>
    public EagerInbox? Bell { get; set; }

    /// <summary>The receive's task (async receives only).</summary>
    public Task<MessageStatus> Task => _task!.Task;

    public bool Accepts(int source, long context, int tag) =>
        context == Context && (Source == Communicator.AnySource || Source == source) && (Tag == Communicator.AnyTag || Tag == tag);

    /// <summary>Where a message of <paramref name="bytes"/> goes: the receive's buffer, or a new array of that length; throws when it does not fit.</summary>
    public abstract Span<byte> Destination(int source, int tag, int bytes);

    /// <summary>Takes <paramref name="data"/> whole when the receive wants a new array of bytes; false to have it copied.</summary>
    public virtual bool TryTake(byte[] data) => false;

    public void Complete(MessageStatus status)
    {
        _status = status;
        Release();
        _task?.TrySetResult(status);
    }

    public void Fail(Exception error)
    {
        _error = error;
        Release();
        if (error is OperationCanceledException canceled)
        {
            _task?.TrySetCanceled(canceled.CancellationToken);
        }
        else
        {
            _task?.TrySetException(error);
        }
    }

    private void Release()
    {
        _done = true;
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _sleepers) != 0)
        {
            lock (_gate)
            {
                Monitor.PulseAll(_gate);
            }
        }
        Bell?.WakeIfSleeping();
    }

    bool IReplyWait.IsCompleted => _done;

    bool IReplyWait.WaitOver => _done;

    bool IReplyWait.IsNested => false;

    bool IReplyWait.Wait(long deadline) => Sleep(deadline);

    /// <summary>
    /// Blocks until the receive completes. When its message may come through <paramref name="inbox"/> (a source on
    /// this node, or any source), polls the inbox on this thread meanwhile; else reads <paramref name="link"/> (the
    /// connection its message comes over, when known) on this thread, or spins for a while (a reply in a
    /// ping-pong comes within microseconds), then sleeps. <paramref name="spun"/>: the turns already spun on the
    /// inbox before the receive was posted, which the inbox's wait does not spin again.
    /// </summary>
    public MessageStatus Wait(XCallConnection? link, EagerInbox? inbox, int spun = 0)
    {
        if (!_done)
        {
            if (inbox is not null && inbox.Covers(Source))
            {
                inbox.Wait(this, spun);
            }
            else if (link is not null && !ReferenceEquals(XCallConnection.Current, link))
            {
                link.WaitReceiving(this, Timeout.InfiniteTimeSpan);
            }
            else
            {
                long start = Stopwatch.GetTimestamp();
                var spin = new SpinWait();
                while (!_done && Stopwatch.GetTimestamp() - start < s_spinTicks)
                {
                    spin.SpinOnce(sleep1Threshold: -1);
                }
                Sleep(long.MaxValue);
            }
        }
        if (_error is not null)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(_error);
        }
        return _status;
    }

    /// <summary>Sleeps until the receive completes (a completion wakes it).</summary>
    public void SleepUntilDone() => Sleep(long.MaxValue);

    /// <summary>Sleeps until the receive completes or <paramref name="deadline"/> (an <see cref="Environment.TickCount64"/> value) passes; false then.</summary>
    private bool Sleep(long deadline)
    {
        if (_done)
        {
            return true;
        }
        lock (_gate)
        {
            Interlocked.Increment(ref _sleepers);
            try
            {
                while (!_done)
                {
                    if (deadline == long.MaxValue)
                    {
                        Monitor.Wait(_gate);
                        continue;
                    }
                    long left = deadline - Environment.TickCount64;
                    if (left <= 0)
                    {
                        return false;
                    }
                    Monitor.Wait(_gate, (int)Math.Min(left, int.MaxValue));
                }
            }
            finally
            {
                Interlocked.Decrement(ref _sleepers);
            }
        }
        return true;
    }
}

/// <summary>A receive of values of <typeparamref name="T"/>, into a buffer or into a new array.</summary>
internal sealed class ReceiveRequest<T> : ReceiveRequest where T : unmanaged
{
    private Memory<T> _buffer;
    private readonly bool _newArray;

    /// <summary>A receive into <paramref name="buffer"/>.</summary>
    public ReceiveRequest(Memory<T> buffer, int source, long context, int tag, bool asynchronous)
        : base(source, context, tag, asynchronous) => _buffer = buffer;

    /// <summary>A receive into a new array as long as the message.</summary>
    public ReceiveRequest(int source, long context, int tag, bool asynchronous)
        : base(source, context, tag, asynchronous) => _newArray = true;

    /// <summary>The values received (the new array's, or the buffer's first ones).</summary>
    public Memory<T> Received { get; private set; }

    public override unsafe Span<byte> Destination(int source, int tag, int bytes)
    {
        int count = bytes / sizeof(T);
        if (_newArray)
        {
            _buffer = new T[count];
        }
        int room = _buffer.Length * sizeof(T);
        if (bytes > room)
        {
            throw new MessageTruncatedException(source, tag, bytes, room);
        }
        Received = _buffer[..count];
        return MemoryMarshal.AsBytes(_buffer.Span)[..bytes];
    }

    public override bool TryTake(byte[] data)
    {
        if (_newArray && typeof(T) == typeof(byte))
        {
            _buffer = Received = (T[])(object)data;
            return true;
        }
        return false;
    }
}
