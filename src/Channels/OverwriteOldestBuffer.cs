namespace XCall.Channels;

/// <summary>
/// A buffer of a fixed capacity that never makes a writer wait: when full, a write drops the
/// oldest value. Readers get the newest <c>capacity</c> values in order.
/// </summary>
public sealed class OverwriteOldestBuffer<T> : IBuffer<T>
{
    private readonly FifoBuffer<T> _newest;

    /// <summary>Creates a buffer holding the newest <paramref name="capacity"/> values.</summary>
    public OverwriteOldestBuffer(int capacity) => _newest = new FifoBuffer<T>(capacity);

    /// <inheritdoc/>
    public bool CanGet => _newest.CanGet;

    /// <inheritdoc/>
    public bool CanPut => true;

    /// <inheritdoc/>
    public void Put(T item)
    {
        if (!_newest.CanPut)
        {
            _newest.Get();
        }
        _newest.Put(item);
    }

    /// <inheritdoc/>
    public T Get() => _newest.Get();
}
