namespace XCall.Channels;

/// <summary>An intrusive FIFO of waiters: O(1) enqueue, dequeue and removal (for cancellation).</summary>
/// <remarks>Not thread-safe: used under its channel's lock.</remarks>
internal struct WaiterQueue<T>
{
    private Waiter<T>? _head;
    private Waiter<T>? _tail;

    internal readonly bool IsEmpty => _head is null;

    /// <summary>Whether a waiter is queued, read without the channel's lock (a hint that is true only if one was).</summary>
    internal bool HasWaiterVolatile => Volatile.Read(ref _head) is not null;

    internal void Enqueue(Waiter<T> waiter)
    {
        waiter.Queued = true;
        waiter.Prev = _tail;
        waiter.Next = null;
        if (_tail is null)
        {
            _head = waiter;
        }
        else
        {
            _tail.Next = waiter;
        }
        _tail = waiter;
    }

    internal readonly Waiter<T> Peek() => _head!;

    internal Waiter<T> Dequeue()
    {
        Waiter<T> waiter = _head!;
        Remove(waiter);
        return waiter;
    }

    internal void Remove(Waiter<T> waiter)
    {
        if (waiter.Prev is null)
        {
            _head = waiter.Next;
        }
        else
        {
            waiter.Prev.Next = waiter.Next;
        }
        if (waiter.Next is null)
        {
            _tail = waiter.Prev;
        }
        else
        {
            waiter.Next.Prev = waiter.Prev;
        }
        waiter.Prev = null;
        waiter.Next = null;
        waiter.Queued = false;
    }

    /// <summary>Unlinks every waiter, oldest first.</summary>
    internal List<Waiter<T>> DrainAll()
    {
        var all = new List<Waiter<T>>();
        while (!IsEmpty)
        {
            all.Add(Dequeue());
        }
        return all;
    }
}
