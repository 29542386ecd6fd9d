namespace XCall.Channels;

/// <summary>A first-in first-out buffer of a fixed capacity: writers wait while it is full.</summary>
public sealed class FifoBuffer<T> : IBuffer<T>
{
    private readonly Queue<T> _items;
    private readonly int _capacity;

    /// <summary>Creates a buffer holding up to <paramref name="capacity"/> values.</summary>
    public FifoBuffer(int capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(capacity);
        _capacity = capacity;
        _items = new Queue<T>(Math.Min(capacity, 1024));
    }

    /// <inheritdoc/>
    public bool CanGet => _items.Count > 0;

    /// <inheritdoc/>
    public bool CanPut => _items.Count < _capacity;

    /// <inheritdoc/>
    public void Put(T item) => _items.Enqueue(item);

    /// <inheritdoc/>
    public T Get() => _items.Dequeue();
}
