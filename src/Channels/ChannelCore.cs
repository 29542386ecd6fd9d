using System.Diagnostics;
using System.Threading.Channels;

namespace XCall.Channels;

/// <summary>
/// The state of one channel of any kind: the buffer, the queues of waiting readers and writers,
/// listeners (alternatives, adapters), poison and completion, all under one lock.
/// </summary>
/// <remarks>
/// Invariants, with the lock held: readers wait only when nothing can be read (buffer empty, no
/// waiting writer); writers wait only when nothing can take their value (no waiting reader, buffer
/// full or absent). So at most one of the two queues is non-empty, and a poisoned channel has both
/// empty. Waiters and listeners are completed or notified after the lock is released, so a
/// continuation that runs inline never runs under it.
/// </remarks>
internal sealed partial class ChannelCore<T>
{
    private readonly Lock _sync = new();
    private readonly IBuffer<T>? _buffer;
    private readonly bool _sharedReaders;
    private readonly bool _sharedWriters;
    private readonly int _immunity;
    private readonly string _kind;
    private WaiterQueue<T> _readers;
    private WaiterQueue<T> _writers;
    private List<IReadinessListener>? _inputListeners;
    private List<IReadinessListener>? _outputListeners;
    private int _poisonStrength;
    private bool _completed;

    // Extended rendezvous: the writer BeginRead took a value from, released by EndRead.
    private bool _inExtendedRead;
    private Waiter<T>? _extendedWriter;
    private SemaphoreSlim? _extendedGate;

    // One recycled waiter: a process that waits again on the same channel reuses it.
    private Waiter<T>? _cache;

    /// <summary>How the blocking forms of both ends wait (<see cref="CspChannel{T}.BlockingWaiter"/>); null: on the operation's task.</summary>
    internal IBlockingWaiter? BlockingWaiter { get; set; }

    internal ChannelCore(string kind, bool sharedReaders, bool sharedWriters, IBuffer<T>? buffer, int immunity)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(immunity);
        _kind = kind;
        _sharedReaders = sharedReaders;
        _sharedWriters = sharedWriters;
        _buffer = buffer;
        _immunity = immunity;
    }

    internal bool SharedReaders => _sharedReaders;

    internal ValueTask<T> ReadAsync(bool extended, CancellationToken token)
    {
        if (token.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<T>(token);
        }
        Waiter<T>? release = null;
        Waiter<T> reader;
        List<IReadinessListener>? notify = null;
        T item;
        lock (_sync)
        {
            ThrowIfPoisonedUnsynchronized();
            if (!_sharedReaders && !_readers.IsEmpty)
            {
                ThrowHelper.ThrowSecondEnd(_kind, "reader");
            }
            if (extended)
            {
                if (_inExtendedRead)
                {
                    ThrowHelper.ThrowExtendedReadOpen();
                }
                _inExtendedRead = true;
            }
            if (TryTakeUnsynchronized(extended, out item, out release, ref notify))
            {
                goto Served;
            }
            if (_completed)
            {
                _inExtendedRead = false;
                ThrowHelper.ThrowClosed();
            }
            reader = RentUnsynchronized();
            reader.Extended = extended;
            _readers.Enqueue(reader);
            notify = TakeUnsynchronized(ref _outputListeners);
        }
        NotifyAll(notify);
        reader.WatchCancellation(token);
        return reader.AsValueTask();

    Served:
        release?.Succeed(default!);
        NotifyAll(notify);
        return new ValueTask<T>(item);
    }

    internal ValueTask WriteAsync(T item, CancellationToken token)
    {
        if (token.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(token);
        }
        Waiter<T>? reader = null;
        Waiter<T>? writer = null;
        List<IReadinessListener>? notify = null;
        lock (_sync)
        {
            ThrowIfPoisonedUnsynchronized();
            if (_completed)
            {
                ThrowHelper.ThrowClosed();
            }
            if (!_sharedWriters && !_writers.IsEmpty)
            {
                ThrowHelper.ThrowSecondEnd(_kind, "writer");
            }
            if (!_readers.IsEmpty)
            {
                reader = _readers.Dequeue();
                if (reader.Extended)
                {
                    // Not queued: the value is taken, only EndRead (or poison) releases this writer.
                    writer = RentUnsynchronized();
                    _extendedWriter = writer;
                }
            }
            else if (_buffer is { } buffer && buffer.CanPut)
            {
                buffer.Put(item);
                notify = TakeUnsynchronized(ref _inputListeners);
            }
            else
            {
                writer = RentUnsynchronized();
                writer.Item = item;
                _writers.Enqueue(writer);
                notify = TakeUnsynchronized(ref _inputListeners);
            }
        }
        reader?.Succeed(item);
        NotifyAll(notify);
        if (writer is null)
        {
            return ValueTask.CompletedTask;
        }
        if (reader is null)
        {
            // Queued: cancellable until a reader takes the value. An extended-read writer is not.
            writer.WatchCancellation(token);
        }
        return writer.AsWriteTask();
    }

    /// <summary>Releases the writer an extended read took its value from.</summary>
    internal void EndRead()
    {
        Waiter<T>? writer;
        SemaphoreSlim? gate;
        lock (_sync)
        {
            if (!_inExtendedRead)
            {
                ThrowHelper.ThrowNoExtendedRead();
            }
            _inExtendedRead = false;
            writer = _extendedWriter;
            _extendedWriter = null;
            gate = _extendedGate;
        }
        writer?.Succeed(default!);
        gate?.Release();
    }

    /// <summary>Shared reader ends serialise extended reads: one BeginRead..EndRead at a time.</summary>
    internal async ValueTask<T> BeginReadSharedAsync(CancellationToken token)
    {
        SemaphoreSlim gate = LazyInitializer.EnsureInitialized(ref _extendedGate, static () => new SemaphoreSlim(1, 1));
        await gate.WaitAsync(token).ConfigureAwait(false);
        try
        {
            return await ReadAsync(extended: true, token).ConfigureAwait(false);
        }
        catch
        {
            lock (_sync)
            {
                _inExtendedRead = false;
            }
            gate.Release();
            throw;
        }
    }

    internal bool TryRead(out T item)
    {
        Waiter<T>? release = null;
        List<IReadinessListener>? notify = null;
        bool taken;
        lock (_sync)
        {
            ThrowIfPoisonedUnsynchronized();
            taken = TryTakeUnsynchronized(extended: false, out item, out release, ref notify);
        }
        release?.Succeed(default!);
        NotifyAll(notify);
        return taken;
    }

    internal bool TryWrite(T item)
    {
        Waiter<T>? reader = null;
        List<IReadinessListener>? notify = null;
        lock (_sync)
        {
            ThrowIfPoisonedUnsynchronized();
            if (_completed)
            {
                return false;
            }
            if (!_readers.IsEmpty && !_readers.Peek().Extended)
            {
                reader = _readers.Dequeue();
            }
            else if (_readers.IsEmpty && _buffer is { } buffer && buffer.CanPut)
            {
                buffer.Put(item);
                notify = TakeUnsynchronized(ref _inputListeners);
            }
            else
            {
                return false;
            }
        }
        reader?.Succeed(item);
        NotifyAll(notify);
        return true;
    }

    /// <summary>
    /// Writes the first values of <paramref name="items"/> that can be written without waiting, in order, under one
    /// hold of the lock: the first to a waiting (non-extended) reader, the next into the buffer while it has room.
    /// Returns how many were written: 0 when the channel is completed, or writers already wait (their values go first).
    /// </summary>
    internal int TryWriteMany(ReadOnlySpan<T> items)
    {
        Waiter<T>? reader = null;
        List<IReadinessListener>? notify = null;
        int written = 0;
        lock (_sync)
        {
            ThrowIfPoisonedUnsynchronized();
            if (_completed || !_writers.IsEmpty || items.IsEmpty)
            {
                return 0;
            }
            if (!_readers.IsEmpty)
            {
                if (_readers.Peek().Extended)
                {
                    return 0;
                }
                // A waiting reader means an empty buffer: it takes the first value, the buffer the next ones.
                reader = _readers.Dequeue();
                written = 1;
            }
            if (_readers.IsEmpty && _buffer is { } buffer)
            {
                int before = written;
                while (written < items.Length && buffer.CanPut)
                {
                    buffer.Put(items[written++]);
                }
                if (written > before)
                {
                    notify = TakeUnsynchronized(ref _inputListeners);
                }
            }
        }
        reader?.Succeed(items[0]);
        NotifyAll(notify);
        return written;
    }

    /// <summary>Takes a value from the buffer or a waiting writer; <paramref name="release"/> is the writer to complete after the lock.</summary>
    private bool TryTakeUnsynchronized(bool extended, out T item, out Waiter<T>? release, ref List<IReadinessListener>? notify)
    {
        release = null;
        if (_buffer is { } buffer && buffer.CanGet)
        {
            item = buffer.Get();
            if (!_writers.IsEmpty)
            {
                // The buffer has room again: the oldest waiting writer's value moves in.
                release = _writers.Dequeue();
                buffer.Put(release.Item);
            }
            else
            {
                notify = TakeUnsynchronized(ref _outputListeners);
            }
            return true;
        }
        if (!_writers.IsEmpty)
        {
            Waiter<T> writer = _writers.Dequeue();
            item = writer.Item;
            if (extended)
            {
                _extendedWriter = writer;
            }
            else
            {
                release = writer;
            }
            return true;
        }
        item = default!;
        return false;
    }

    internal void CancelWaiter(Waiter<T> waiter, CancellationToken token)
    {
        lock (_sync)
        {
            if (!waiter.Queued)
            {
                return;
            }
            if (waiter.Extended)
            {
                _inExtendedRead = false;
            }
            // At most one queue is non-empty, so a queued waiter is in the one that is.
            if (!_readers.IsEmpty)
            {
                _readers.Remove(waiter);
            }
            else
            {
                _writers.Remove(waiter);
            }
        }
        waiter.Fail(new OperationCanceledException(token));
    }

    /// <summary>Poisons the channel unless <paramref name="strength"/> is within its immunity.</summary>
    internal void Poison(int strength)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(strength);
        List<Waiter<T>> readers;
        List<Waiter<T>> writers;
        Waiter<T>? extendedWriter;
        List<IReadinessListener>? input;
        List<IReadinessListener>? output;
        lock (_sync)
        {
            if (strength <= _immunity || strength <= _poisonStrength)
            {
                return;
            }
            _poisonStrength = strength;
            readers = _readers.DrainAll();
            writers = _writers.DrainAll();
            extendedWriter = _extendedWriter;
            _extendedWriter = null;
            input = TakeUnsynchronized(ref _inputListeners);
            output = TakeUnsynchronized(ref _outputListeners);
        }
        var error = new PoisonException(strength);
        foreach (Waiter<T> w in readers)
        {
            w.Fail(error);
        }
        foreach (Waiter<T> w in writers)
        {
            w.Fail(error);
        }
        extendedWriter?.Fail(error);
        NotifyAll(input);
        NotifyAll(output);
    }

    /// <summary>No more writes: readers drain what is buffered or offered, then see the channel closed.</summary>
    internal bool Complete()
    {
        List<Waiter<T>> readers;
        List<IReadinessListener>? input;
        lock (_sync)
        {
            if (_completed)
            {
                return false;
            }
            _completed = true;
            // Readers wait only when nothing is offered, so every waiting reader now sees the end.
            readers = _readers.DrainAll();
            if (readers.Exists(static r => r.Extended))
            {
                // The extended read that was waiting will never be served: no EndRead follows.
                _inExtendedRead = false;
            }
            input = TakeUnsynchronized(ref _inputListeners);
        }
        var error = new ChannelClosedException();
        foreach (Waiter<T> w in readers)
        {
            w.Fail(error);
        }
        NotifyAll(input);
        return true;
    }

    internal bool IsCompleted
    {
        get
        {
            lock (_sync)
            {
                return _completed;
            }
        }
    }

    [Conditional("DEBUG")]
    private void AssertInvariantsUnsynchronized()
    {
        Debug.Assert(_readers.IsEmpty || _writers.IsEmpty, "readers and writers never wait at once");
        Debug.Assert(_poisonStrength == 0 || (_readers.IsEmpty && _writers.IsEmpty), "a poisoned channel holds no waiters");
    }

    private void ThrowIfPoisonedUnsynchronized()
    {
        AssertInvariantsUnsynchronized();
        if (_poisonStrength > 0)
        {
            ThrowHelper.ThrowPoison(_poisonStrength);
        }
    }

    private Waiter<T> RentUnsynchronized()
    {
        Waiter<T>? w = Interlocked.Exchange(ref _cache, null);
        return w ?? new Waiter<T>(this);
    }

    internal void Return(Waiter<T> waiter) => Interlocked.CompareExchange(ref _cache, waiter, null);

    private static List<IReadinessListener>? TakeUnsynchronized(ref List<IReadinessListener>? listeners)
    {
        List<IReadinessListener>? taken = listeners;
        listeners = null;
        return taken is { Count: > 0 } ? taken : null;
    }

    private static void NotifyAll(List<IReadinessListener>? listeners)
    {
        if (listeners is null)
        {
            return;
        }
        foreach (IReadinessListener l in listeners)
        {
            l.Notify();
        }
    }
}
