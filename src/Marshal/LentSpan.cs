using System.Runtime.InteropServices;
using XCall.Marshal;

namespace XCall;

/// <summary>
/// A read-only block of unmanaged values that a synchronous method's callee copies where it wants it, for bulk
/// data (a receive into the callee's own buffer, as MPI's receive does). Across processes on one machine whose
/// peer can read the caller's memory (shared memory with <c>ShmOptions.CrossMemoryAttach</c>), a block built from
/// an array of at least the transport's threshold is not copied into the message: <see cref="CopyTo"/> copies it
/// once, straight from the caller's array into the callee's destination. Otherwise the values travel in the
/// message like a <see cref="ReadOnlySpan{T}"/> and <see cref="CopyTo"/> copies them from there.
/// </summary>
/// <remarks>
/// Like a span, a <see cref="LentSpan{T}"/> lives only for the call: read it before the method returns. It is an
/// input: a callee cannot write into the caller's values, and a method cannot return one. Build it from an array
/// (implicitly, or with an offset and a count) to let it be lent; one built from any other span is always copied.
/// </remarks>
public readonly ref struct LentSpan<T> where T : unmanaged
{
    private readonly ReadOnlySpan<T> _span;
    private readonly T[]? _array;
    private readonly int _start;
    private readonly IPeerMemory? _peer;
    private readonly ulong _address;
    private readonly ulong _ticket;
    private readonly int _length;

    /// <summary>The values of <paramref name="values"/> (copied into the message when the call is remote).</summary>
    public LentSpan(ReadOnlySpan<T> values)
    {
        _span = values;
        _length = values.Length;
    }

    /// <summary>The whole of <paramref name="array"/>, which a transport may lend (null reads as empty).</summary>
    public LentSpan(T[]? array)
        : this(array, 0, array?.Length ?? 0)
    {
    }

    /// <summary><paramref name="length"/> values of <paramref name="array"/> from <paramref name="start"/>, which a transport may lend.</summary>
    public LentSpan(T[]? array, int start, int length)
    {
        _span = new ReadOnlySpan<T>(array, start, length); // checks the range
        _array = array;
        _start = start;
        _length = length;
    }

    /// <summary>A block in the peer's memory, read by <see cref="CopyTo"/>.</summary>
    internal LentSpan(IPeerMemory peer, ulong address, ulong ticket, int length)
    {
        _peer = peer;
        _address = address;
        _ticket = ticket;
        _length = length;
    }

    /// <summary>How many values.</summary>
    public int Length => _length;

    /// <summary>True when there are no values.</summary>
    public bool IsEmpty => _length == 0;

    /// <summary>True when the values are still in the caller's process: <see cref="CopyTo"/> fetches them from there.</summary>
    public bool IsInPeer => _peer is not null;

    /// <summary>The array this block was built from and where in it it starts; null when not built from an array.</summary>
    internal T[]? Array => _array;

    internal int Start => _start;

    /// <summary>
    /// Copies the values into the start of <paramref name="destination"/>. From the caller's process this is one
    /// <c>process_vm_readv</c>; a failure there raises <see cref="XCallProtocolException"/>, or a disconnect when
    /// the connection is ending.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than <see cref="Length"/>.</exception>
    public void CopyTo(Span<T> destination)
    {
        if (destination.Length < _length)
        {
            throw new ArgumentException($"The destination holds {destination.Length} values; the block has {_length}.", nameof(destination));
        }
        if (_peer is { } peer)
        {
            if (_length > 0)
            {
                peer.Read(_address, _ticket, MemoryMarshal.AsBytes(destination[.._length]));
            }
            return;
        }
        _span.CopyTo(destination);
    }

    /// <summary>The values in a new array.</summary>
    public T[] ToArray()
    {
        if (_length == 0)
        {
            return [];
        }
        T[] array = GC.AllocateUninitializedArray<T>(_length);
        CopyTo(array);
        return array;
    }

    /// <summary>The values as a span when they are in this process (not <see cref="IsInPeer"/>): no copy.</summary>
    public bool TryGetSpan(out ReadOnlySpan<T> values)
    {
        values = _span;
        return _peer is null;
    }

    /// <summary>The whole of <paramref name="array"/>, which a transport may lend.</summary>
    public static implicit operator LentSpan<T>(T[]? array) => new(array);

    /// <summary>The values of <paramref name="values"/>, always copied into the message.</summary>
    public static implicit operator LentSpan<T>(ReadOnlySpan<T> values) => new(values);

    /// <summary>The values of <paramref name="values"/>, always copied into the message.</summary>
    public static implicit operator LentSpan<T>(Span<T> values) => new(values);
}
