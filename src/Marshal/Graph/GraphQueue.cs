namespace XCall.Marshal;

/// <summary>
/// The objects whose bodies are still to be written or read, in the order their tags went on the wire:
/// a ring of (object, type) pairs that grows by doubling. A dequeued slot is cleared at once so the
/// queue never keeps an object of a finished message alive.
/// </summary>
internal sealed class GraphQueue
{
    private const int InitialCapacity = 8;
    private const int MaxPooledCapacity = 1024;

    private (object Value, GraphType Type)[] _items = new (object, GraphType)[InitialCapacity];
    private int _head;
    private int _count;

    public int Count => _count;

    public void Enqueue(object value, GraphType type)
    {
        if (_count == _items.Length)
        {
            Grow();
        }
        _items[(_head + _count) & (_items.Length - 1)] = (value, type);
        _count++;
    }

    public bool TryDequeue(out object value, out GraphType type)
    {
        if (_count == 0)
        {
            value = null!;
            type = null!;
            return false;
        }
        ref (object Value, GraphType Type) slot = ref _items[_head];
        (value, type) = slot;
        slot = default;
        _head = (_head + 1) & (_items.Length - 1);
        _count--;
        return true;
    }

    /// <summary>Empties the queue (after a failed message) and drops a ring grown past the pooled size.</summary>
    public void Reset()
    {
        if (_items.Length > MaxPooledCapacity)
        {
            _items = new (object, GraphType)[InitialCapacity];
        }
        else if (_count > 0)
        {
            Array.Clear(_items);
        }
        _head = 0;
        _count = 0;
    }

    private void Grow()
    {
        var bigger = new (object, GraphType)[_items.Length * 2];
        int first = Math.Min(_count, _items.Length - _head);
        Array.Copy(_items, _head, bigger, 0, first);
        Array.Copy(_items, 0, bigger, first, _count - first);
        _items = bigger;
        _head = 0;
    }
}
