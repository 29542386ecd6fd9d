namespace XCall.Channels.Distributed;

/// <summary>
/// The buffer of a buffered channel this process hosts for other processes: the buffer the channel was created
/// with, counted, so the host grants remote writers credits for free slots only (<see cref="Intake{T}"/>) and hears
/// when a reader frees one.
/// </summary>
internal sealed class CountedBuffer<T> : IBuffer<T>
{
    // Design: the channel calls Put and Get under its own lock; _held changes only there (Put a plain store, Get an
    // Interlocked decrement, a full fence) and is read by the intake without that lock. Get tells the intake after its
    // decrement, so an intake that reads _held after publishing a waiting request (also behind a full fence) sees the
    // freed slot, or Get sees the request.
    private readonly IBuffer<T> _inner;
    private int _held;

    private CountedBuffer(IBuffer<T> inner, int capacity)
    {
        _inner = inner;
        Capacity = capacity;
    }

    /// <summary>The most values the buffer holds, or 0 when it takes every value (unbounded, or dropping old ones).</summary>
    public int Capacity { get; }

    /// <summary>The values in the buffer now.</summary>
    public int Held => Volatile.Read(ref _held);

    /// <summary>The intake to tell of freed slots; set before the channel is offered to other processes.</summary>
    internal IIntake? Intake { get; set; }

    /// <inheritdoc/>
    public bool CanGet => _inner.CanGet;

    /// <inheritdoc/>
    public bool CanPut => _inner.CanPut;

    /// <inheritdoc/>
    public void Put(T item)
    {
        _inner.Put(item);
        Volatile.Write(ref _held, _held + 1); // under the channel's lock, as every change of _held: no update is lost
    }

    /// <inheritdoc/>
    public T Get()
    {
        T item = _inner.Get();
        Interlocked.Decrement(ref _held);
        Intake?.OnSlotFreed();
        return item;
    }

    /// <summary>
    /// Wraps <paramref name="buffer"/>, which no channel uses yet. Its capacity is found by filling it with default
    /// values and taking them out again; a buffer that still takes values at <see cref="Intake{T}.Window"/> counts
    /// as unbounded (remote writers then hold at most that many credits, and a dropping buffer never holds them up).
    /// </summary>
    public static CountedBuffer<T> Wrap(IBuffer<T> buffer)
    {
        int capacity = 0;
        while (buffer.CanPut && capacity < Intake<T>.Window)
        {
            buffer.Put(default!);
            capacity++;
        }
        bool bounded = !buffer.CanPut;
        while (buffer.CanGet)
        {
            buffer.Get();
        }
        return new CountedBuffer<T>(buffer, bounded ? capacity : 0);
    }
}

/// <summary>What a <see cref="CountedBuffer{T}"/> tells its channel's intake.</summary>
internal interface IIntake
{
    /// <summary>A reader took a value out of the buffer; called under the channel's lock, so it only signals.</summary>
    void OnSlotFreed();
}
