using System.Diagnostics;
using System.Runtime.InteropServices;

namespace XCall.Communicator;

/// <summary>
/// A receive posted to the <see cref="Mailbox"/>: what it accepts, where the message goes, and its completion,
/// waited on by a blocking receive (spin, then sleep) or awaited as a task.
/// </summary>
internal abstract class ReceiveRequest
{
    // Design: the mailbox hands a request at most one message, on one thread, and calls Complete or Fail once;
    // _done is set last, under _gate, and a sleeping waiter is pulsed under the same lock, so a waiter that checks
    // _done under the lock before Monitor.Wait never misses it. The task (async receives) completes outside the lock.
    private static readonly long s_spinTicks = Stopwatch.Frequency / 20_000; // 50 µs of spinning before sleeping

    private readonly object _gate = new();
    private readonly TaskCompletionSource<MessageStatus>? _task;
    private volatile bool _done;
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
        lock (_gate)
        {
            _status = status;
            _done = true;
            Monitor.PulseAll(_gate);
        }
        _task?.TrySetResult(status);
    }

    public void Fail(Exception error)
    {
        lock (_gate)
        {
            _error = error;
            _done = true;
            Monitor.PulseAll(_gate);
        }
        if (error is OperationCanceledException canceled)
        {
            _task?.TrySetCanceled(canceled.CancellationToken);
        }
        else
        {
            _task?.TrySetException(error);
        }
    }

    /// <summary>Blocks until the receive completes: spins for a while (a reply in a ping-pong comes within microseconds), then sleeps.</summary>
    public MessageStatus Wait()
    {
        if (!_done)
        {
            long start = Stopwatch.GetTimestamp();
            var spin = new SpinWait();
            while (!_done && Stopwatch.GetTimestamp() - start < s_spinTicks)
            {
                spin.SpinOnce(sleep1Threshold: -1);
            }
            lock (_gate)
            {
                while (!_done)
                {
                    Monitor.Wait(_gate);
                }
            }
        }
        if (_error is not null)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(_error);
        }
        return _status;
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
