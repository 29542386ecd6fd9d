namespace XCall.Channels;

internal sealed partial class ChannelCore<T>
{
    /// <summary>
    /// For an Alternative's guard: true when the input (a value is buffered or offered) or the
    /// output (a reader waits, or the buffer has room) is ready, or when the operation would throw
    /// at once (poisoned, completed). Otherwise registers <paramref name="listener"/>.
    /// </summary>
    internal bool EnableGuard(IReadinessListener listener, bool output)
    {
        lock (_sync)
        {
            if (output ? OutputReadyUnsynchronized() : InputReadyUnsynchronized())
            {
                return true;
            }
            ref List<IReadinessListener>? listeners = ref output ? ref _outputListeners : ref _inputListeners;
            (listeners ??= []).Add(listener);
            return false;
        }
    }

    /// <summary>
    /// For an Alternative's first look: whether the guard is ready now, registering nothing. An
    /// unbuffered channel is read without the lock: poison, completion and a queued peer are each
    /// seen as they were at some moment during the call, and on a guard's "one" side none of them
    /// goes away until the selecting process acts (see Alternative's design note). A buffered
    /// channel asks its buffer, which is not thread-safe, under the lock.
    /// </summary>
    internal bool PollGuard(bool output)
    {
        if (_buffer is null)
        {
            return Volatile.Read(ref _poisonStrength) > 0
                || Volatile.Read(ref _completed)
                || (output ? _readers.HasWaiterVolatile : _writers.HasWaiterVolatile);
        }
        lock (_sync)
        {
            return output ? OutputReadyUnsynchronized() : InputReadyUnsynchronized();
        }
    }

    /// <summary>Only a "one" end can guard: another process on a shared end could take the communication the Alternative chose.</summary>
    internal void CheckCanGuard(bool output)
    {
        if (output ? _sharedWriters : _sharedReaders)
        {
            ThrowHelper.ThrowSharedGuard(_kind, output ? "writer" : "reader");
        }
    }

    /// <summary>Unregisters <paramref name="listener"/> and says whether that side is ready now.</summary>
    internal bool DisableGuard(IReadinessListener listener, bool output)
    {
        lock (_sync)
        {
            (output ? _outputListeners : _inputListeners)?.Remove(listener);
            return output ? OutputReadyUnsynchronized() : InputReadyUnsynchronized();
        }
    }

    /// <summary>Whether a value can be read now, or the channel is over; for ChannelReader.WaitToReadAsync.</summary>
    internal ValueTask<bool> WaitToReadAsync(CancellationToken token)
    {
        ReadinessSignal signal;
        lock (_sync)
        {
            ThrowIfPoisonedUnsynchronized();
            if (_buffer is { CanGet: true } || !_writers.IsEmpty)
            {
                return new ValueTask<bool>(true);
            }
            if (_completed)
            {
                return new ValueTask<bool>(false);
            }
            // A cancelled wait leaves its signal registered until the next notification: one-shot and harmless.
            signal = new ReadinessSignal();
            (_inputListeners ??= []).Add(signal);
        }
        return signal.WaitAsync(token);
    }

    /// <summary>Whether a value can be written now, or false once completed; for ChannelWriter.WaitToWriteAsync.</summary>
    internal ValueTask<bool> WaitToWriteAsync(CancellationToken token)
    {
        ReadinessSignal signal;
        lock (_sync)
        {
            ThrowIfPoisonedUnsynchronized();
            if (_completed)
            {
                return new ValueTask<bool>(false);
            }
            if (OutputReadyUnsynchronized())
            {
                return new ValueTask<bool>(true);
            }
            signal = new ReadinessSignal();
            (_outputListeners ??= []).Add(signal);
        }
        return signal.WaitAsync(token);
    }

    private bool InputReadyUnsynchronized() =>
        _poisonStrength > 0 || _completed || _buffer is { CanGet: true } || !_writers.IsEmpty;

    private bool OutputReadyUnsynchronized() =>
        _poisonStrength > 0 || _completed || !_readers.IsEmpty || (_buffer is { CanPut: true });

    /// <summary>A one-shot wake-up for the adapters; a wake is a hint to look again.</summary>
    private sealed class ReadinessSignal : IReadinessListener
    {
        private readonly TaskCompletionSource<bool> _woken = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Notify() => _woken.TrySetResult(true);

        internal ValueTask<bool> WaitAsync(CancellationToken token) =>
            new(token.CanBeCanceled ? _woken.Task.WaitAsync(token) : _woken.Task);
    }
}
