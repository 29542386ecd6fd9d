namespace XCall.Channels;

/// <summary>An unbounded first-in first-out buffer: writes never wait.</summary>
public sealed class InfiniteBuffer<T> : IBuffer<T>
{
    private readonly Queue<T> _items = new();

    /// <inheritdoc/>
    public bool CanGet => _items.Count > 0;

    /// <inheritdoc/>
    public bool CanPut => true;

    /// <inheritdoc/>
    public void Put(T item) => _items.Enqueue(item);

    /// <inheritdoc/>
    public T Get() => _items.Dequeue();
}
