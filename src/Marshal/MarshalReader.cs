using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace XCall.Marshal;

/// <summary>
/// Reads XCall's wire format in place from transport memory. Every length is checked against what is
/// left of the message and against <see cref="MarshalLimits"/> before anything is allocated; malformed
/// or truncated input raises <see cref="XCallProtocolException"/> and nothing else.
/// </summary>
public ref partial struct MarshalReader
{
    private ReadOnlySpan<byte> _span;
    private int _pos;
    private readonly IMarshalInput? _input;
    private long _rest; // bytes of the message after the current span
    private readonly MarshalLimits _limits;
    private int _depth;
    private GraphReadState? _graph;
    private object? _first;
    private int _objectCount;
    private int _active;
    private int _incomplete;
    private long _lentBytes; // bytes of the lent blocks read so far (bounded by PeerMemory.MaxBlockBytes)
    private int _current; // id of the object whose members are being read (while _active != 0)
    private bool _currentByValue; // whether that object's type compares by value (GraphType.ComparesByValue)
    private bool _firstByValue; // the same for object 0, kept in _first

    /// <summary>Reads a message that is all in <paramref name="data"/>, within <see cref="MarshalLimits.Default"/>.</summary>
    public MarshalReader(ReadOnlySpan<byte> data)
        : this(data, null)
    {
    }

    /// <summary>Reads a message that is all in <paramref name="data"/>, within <paramref name="limits"/>
    /// (<see cref="MarshalLimits.Default"/> when null).</summary>
    public MarshalReader(ReadOnlySpan<byte> data, MarshalLimits? limits)
    {
        _span = data;
        _input = null;
        _rest = 0;
        _limits = limits ?? MarshalLimits.Default;
    }

    /// <summary>Reads a message of <paramref name="totalLength"/> bytes whose first chunk is
    /// <paramref name="first"/> and whose next chunks come from <paramref name="input"/>, within
    /// <see cref="MarshalLimits.Default"/>.</summary>
    public MarshalReader(ReadOnlySpan<byte> first, long totalLength, IMarshalInput input)
        : this(first, totalLength, input, null)
    {
    }

    /// <summary>Reads a message of <paramref name="totalLength"/> bytes whose first chunk is
    /// <paramref name="first"/> and whose next chunks come from <paramref name="input"/>, within
    /// <paramref name="limits"/> (<see cref="MarshalLimits.Default"/> when null).</summary>
    public MarshalReader(ReadOnlySpan<byte> first, long totalLength, IMarshalInput input, MarshalLimits? limits)
    {
        if (totalLength < first.Length)
        {
            first = first[..(int)totalLength];
        }
        _span = first;
        _input = input;
        _rest = totalLength - first.Length;
        _limits = limits ?? MarshalLimits.Default;
    }

    /// <summary>
    /// Where the message came from, for marshallers that need more than the bytes (the connection, so an
    /// object reference becomes a proxy on it). Null when the message did not come from anywhere.
    /// </summary>
    public object? Context { readonly get; set; }

    /// <summary>The limits this reader enforces.</summary>
    public readonly MarshalLimits Limits => _limits;

    /// <summary>Bytes of the message not read yet.</summary>
    public readonly long Remaining => _span.Length - _pos + _rest;

    /// <summary>Raises <see cref="XCallProtocolException"/> unless the whole message was read; ends the message's object graph.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)] // every dispatch and reply calls it; the throw stays out of line
    public void EnsureFullyConsumed()
    {
        if (_objectCount != 0)
        {
            EndGraph();
        }
        long remaining = Remaining;
        if (remaining != 0)
        {
            ThrowNotConsumed(remaining);
        }
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowNotConsumed(long remaining) =>
        throw new XCallProtocolException($"{remaining} unexpected byte(s) after the end of the payload.");

    /// <summary>Reads an unmanaged value from its in-memory bytes.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public T Read<T>() where T : unmanaged
    {
        int size = Unsafe.SizeOf<T>();
        if ((uint)(_span.Length - _pos) < (uint)size)
        {
            return ReadSlow<T>();
        }
        T value = Unsafe.ReadUnaligned<T>(ref Unsafe.Add(ref MemoryMarshal.GetReference(_span), _pos));
        _pos += size;
        return value;
    }

    /// <summary>Reads a 32-bit little-endian integer.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int ReadInt32() => Read<int>();

    /// <summary>Reads one byte.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public byte ReadByte() => Read<byte>();

    /// <summary>Reads a boolean; a byte other than 0 or 1 is a protocol error.</summary>
    public bool ReadBoolean()
    {
        byte b = Read<byte>();
        if (b > 1)
        {
            ThrowHelper.BadTag("boolean", b);
        }
        return b == 1;
    }

    /// <summary>Reads a presence tag: false for null, true for present; anything else is a protocol error.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool ReadPresence()
    {
        byte b = Read<byte>();
        if (b > WireFormat.Present)
        {
            ThrowHelper.BadTag("presence", b);
        }
        return b == WireFormat.Present;
    }

    /// <summary>Reads a tag byte without interpreting it (graph and polymorphic formats).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public byte ReadTag() => Read<byte>();

    /// <summary>Reads a nullable unmanaged value.</summary>
    public T? ReadNullable<T>() where T : unmanaged => ReadPresence() ? Read<T>() : null;

    /// <summary>
    /// Reads a collection length: -1 for null, else a count checked against the limit and against the
    /// bytes left (every element takes at least <paramref name="minElementSize"/> bytes).
    /// </summary>
    public int ReadLength(int minElementSize = 1)
    {
        int length = Read<int>();
        if (length == WireFormat.NullLength)
        {
            return length;
        }
        if (length < 0 || length > _limits.MaxCollectionCount || (long)length * minElementSize > Remaining)
        {
            ThrowHelper.BadLength("collection", length, Math.Min(_limits.MaxCollectionCount, Remaining / Math.Max(1, minElementSize)));
        }
        return length;
    }

    /// <summary>Reads a string; null and empty are distinct.</summary>
    public string? ReadString()
    {
        int length = Read<int>();
        if (length == WireFormat.NullLength)
        {
            return null;
        }
        if (length < 0 || length > _limits.MaxStringLength || (long)length * sizeof(char) > Remaining)
        {
            ThrowHelper.BadLength("string", length, Math.Min(_limits.MaxStringLength, Remaining / sizeof(char)));
        }
        if (length == 0)
        {
            return string.Empty;
        }
        int bytes = length * sizeof(char);
        if (_span.Length - _pos >= bytes)
        {
            string s = new(MemoryMarshal.Cast<byte, char>(_span.Slice(_pos, bytes)));
            _pos += bytes;
            return s;
        }
        string result = new('\0', length);
        ReadBlock(MemoryMarshal.AsBytes(MemoryMarshal.CreateSpan(ref MemoryMarshal.GetReference(result.AsSpan()), length)));
        return result;
    }

    /// <summary>Reads an array of unmanaged values written by <see cref="MarshalWriter.WriteArray{T}"/>.</summary>
    public T[]? ReadArray<T>() where T : unmanaged
    {
        int length = Read<int>();
        if (length == WireFormat.LentLength)
        {
            return ReadLentArray<T>();
        }
        length = CheckBlockLength<T>(length);
        if (length == WireFormat.NullLength)
        {
            return null;
        }
        if (length == 0)
        {
            return [];
        }
        T[] array = GC.AllocateUninitializedArray<T>(length);
        ReadBlock(MemoryMarshal.AsBytes(array.AsSpan()));
        return array;
    }

    /// <summary>
    /// The peer's memory, for arrays it lent instead of copying into the message (see <see cref="IBlockLender"/>);
    /// set by a transport that lends. Null: a lent block is malformed input.
    /// </summary>
    public IPeerMemory? PeerMemory { readonly get; set; }

    /// <summary>Reads the count and address of a lent array and copies it out of the peer's memory.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private T[] ReadLentArray<T>() where T : unmanaged => ReadLentBlock<T>().ToArray();

    /// <summary>
    /// The lent block after a <see cref="WireFormat.LentLength"/> (count, address, ticket), its count checked against
    /// the limits before anything is allocated, and against a reader with no <see cref="PeerMemory"/>.
    /// </summary>
    private LentSpan<T> ReadLentBlock<T>() where T : unmanaged
    {
        int length = Read<int>();
        ulong address = Read<ulong>();
        ulong ticket = Read<ulong>();
        if (PeerMemory is not { } peer)
        {
            throw new XCallProtocolException($"The message holds a lent array (length {WireFormat.LentLength}), but its transport lends nothing.");
        }
        // The bytes are not in the message: the limits and the transport's bound on one message's lent blocks together
        // bound them (a block costs its sender 24 bytes of message, so without the bound a few hundred bytes could make
        // the reader allocate gigabytes), and a lent block is never empty.
        long bytes = (long)length * Unsafe.SizeOf<T>();
        long maxBytes = Math.Min(Math.Min(_limits.MaxBlockBytes, peer.MaxBlockBytes - _lentBytes), int.MaxValue);
        if (length <= 0 || length > _limits.MaxCollectionCount || bytes > maxBytes)
        {
            ThrowHelper.BadLength("lent array", length, Math.Max(0, Math.Min(_limits.MaxCollectionCount, maxBytes / Unsafe.SizeOf<T>())));
        }
        _lentBytes += bytes;
        return new LentSpan<T>(peer, address, ticket, length);
    }

    /// <summary>
    /// Reads values written by <see cref="MarshalWriter.WriteSpan{T}"/> (or <see cref="MarshalWriter.WriteArray{T}"/>;
    /// null reads as empty) without allocating: the span points into the message's own memory when the values
    /// lie there contiguous and aligned for <typeparamref name="T"/>; otherwise they are copied into an array
    /// rented from <see cref="BoundedArrayPool"/>, handed out in <paramref name="rented"/> for the caller to give
    /// back there (a copy past <see cref="BoundedArrayPool.MaxPooledBytes"/> goes to the GC, not the shared pool).
    /// An in-place span is valid while the message is being handled (a transport keeps a
    /// message's memory until its handler returns): the generated dispatcher passes it to a method's
    /// <see cref="ReadOnlySpan{T}"/> parameter, which cannot outlive the call.
    /// </summary>
    public ReadOnlySpan<T> ReadSpanInPlace<T>(ref T[]? rented) where T : unmanaged
    {
        int length = Read<int>();
        if (length == WireFormat.LentLength)
        {
            LentSpan<T> block = ReadLentBlock<T>();
            rented = BoundedArrayPool.Rent<T>(block.Length); // handed out before the read, as below
            block.CopyTo(rented);
            return rented.AsSpan(0, block.Length);
        }
        return ReadSpanInPlaceOf(CheckBlockLength<T>(length), ref rented);
    }

    /// <summary>
    /// Reads a <see cref="LentSpan{T}"/> written by <see cref="MarshalWriter.WriteLent{T}"/> (or any array or span
    /// format): a lent block stays in the peer until the callee copies it (<see cref="LentSpan{T}.CopyTo"/>); values
    /// in the message are read as <see cref="ReadSpanInPlace{T}"/> reads them (a rented copy in <paramref name="rented"/>
    /// when split or misaligned).
    /// </summary>
    public LentSpan<T> ReadLent<T>(ref T[]? rented) where T : unmanaged
    {
        int length = Read<int>();
        if (length == WireFormat.LentLength)
        {
            return ReadLentBlock<T>();
        }
        return new LentSpan<T>(ReadSpanInPlaceOf(CheckBlockLength<T>(length), ref rented));
    }

    private ReadOnlySpan<T> ReadSpanInPlaceOf<T>(int length, ref T[]? rented) where T : unmanaged
    {
        if (length <= 0)
        {
            return default; // empty, or null (a span has no null)
        }
        int bytes = length * Unsafe.SizeOf<T>(); // ReadBlockLength bounded it by int.MaxValue
        if (_pos == _span.Length)
        {
            NextChunk(); // the values start a chunk (a ring writer starts a block after the wrap rather than split it)
        }
        if (_span.Length - _pos >= bytes)
        {
            ref byte start = ref Unsafe.Add(ref MemoryMarshal.GetReference(_span), _pos);
            if (IsAligned<T>(ref start))
            {
                _pos += bytes;
                return MemoryMarshal.CreateReadOnlySpan(ref Unsafe.As<byte, T>(ref start), length);
            }
        }
        T[] array = BoundedArrayPool.Rent<T>(length);
        rented = array; // handed out before the read, so a malformed rest still gets it back to the pool
        ReadBlock(MemoryMarshal.AsBytes(array.AsSpan(0, length)));
        return array.AsSpan(0, length);
    }

    /// <summary>True when <paramref name="at"/> is aligned for <typeparamref name="T"/>: to the largest power of
    /// two (at most 8) that divides its size, which is what the runtime gives a field of that type.</summary>
    private static unsafe bool IsAligned<T>(ref byte at) where T : unmanaged
    {
        int size = Unsafe.SizeOf<T>();
        int alignment = Math.Min(size & -size, 8);
        return ((nuint)Unsafe.AsPointer(ref at) & (nuint)(alignment - 1)) == 0;
    }

    /// <summary>Reads a list of unmanaged values written by <see cref="MarshalWriter.WriteList{T}"/>.</summary>
    public List<T>? ReadList<T>() where T : unmanaged
    {
        int length = ReadBlockLength<T>();
        if (length == WireFormat.NullLength)
        {
            return null;
        }
        var list = new List<T>(length);
        CollectionsMarshal.SetCount(list, length);
        ReadBlock(MemoryMarshal.AsBytes(CollectionsMarshal.AsSpan(list)));
        return list;
    }

    /// <summary>Reads a value through its marshaller.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public T ReadValue<T, TMarshaller>() where TMarshaller : IMarshaller<T> => TMarshaller.Read(ref this);

    /// <summary>Enters one level of object nesting; raises a protocol error past <see cref="MarshalLimits.MaxDepth"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void EnterObject()
    {
        if (++_depth > _limits.MaxDepth)
        {
            ThrowHelper.TooDeep(_limits.MaxDepth);
        }
    }

    /// <summary>Leaves one level of object nesting.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void ExitObject() => _depth--;

    /// <summary>Copies the next <c>destination.Length</c> bytes of the message into <paramref name="destination"/>.</summary>
    public void ReadBlock(Span<byte> destination)
    {
        int avail = _span.Length - _pos;
        if (destination.Length <= avail)
        {
            _span.Slice(_pos, destination.Length).CopyTo(destination);
            _pos += destination.Length;
            return;
        }
        ReadBlockSlow(destination);
    }

    /// <summary>Returns the next <paramref name="length"/> bytes in place when they are contiguous in
    /// transport memory (valid until the reader moves on), or copies them into a new array.</summary>
    public ReadOnlySpan<byte> ReadBytesInPlace(int length)
    {
        if ((uint)length > Remaining)
        {
            ThrowHelper.Truncated(length, Remaining);
        }
        if (_span.Length - _pos >= length)
        {
            ReadOnlySpan<byte> s = _span.Slice(_pos, length);
            _pos += length;
            return s;
        }
        byte[] copy = new byte[length];
        ReadBlockSlow(copy);
        return copy;
    }

    private int ReadBlockLength<T>() where T : unmanaged => CheckBlockLength<T>(Read<int>());

    private int CheckBlockLength<T>(int length) where T : unmanaged
    {
        if (length == WireFormat.NullLength)
        {
            return length;
        }
        long bytes = (long)length * Unsafe.SizeOf<T>();
        // A block is copied as one span of bytes: more than int.MaxValue bytes is refused whatever the limits say.
        if (length < 0 || length > _limits.MaxCollectionCount || bytes > _limits.MaxBlockBytes || bytes > Remaining || bytes > int.MaxValue)
        {
            ThrowHelper.BadLength("array", length, Math.Min(Math.Min(Math.Min(_limits.MaxCollectionCount, _limits.MaxBlockBytes / Unsafe.SizeOf<T>()), Remaining / Unsafe.SizeOf<T>()), int.MaxValue / Unsafe.SizeOf<T>()));
        }
        return length;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private T ReadSlow<T>() where T : unmanaged
    {
        T value = default;
        ReadBlockSlow(MemoryMarshal.AsBytes(MemoryMarshal.CreateSpan(ref value, 1)));
        return value;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReadBlockSlow(Span<byte> destination)
    {
        if (destination.Length > Remaining)
        {
            ThrowHelper.Truncated(destination.Length, Remaining);
        }
        while (!destination.IsEmpty)
        {
            int avail = _span.Length - _pos;
            if (avail == 0)
            {
                NextChunk();
                continue;
            }
            int n = Math.Min(avail, destination.Length);
            _span.Slice(_pos, n).CopyTo(destination);
            _pos += n;
            destination = destination[n..];
        }
    }

    private void NextChunk()
    {
        ReadOnlySpan<byte> next = _input is null ? default : _input.NextChunk();
        if (next.IsEmpty)
        {
            ThrowHelper.Truncated(1, 0);
        }
        if (next.Length > _rest)
        {
            next = next[..(int)_rest];
        }
        _rest -= next.Length;
        _span = next;
        _pos = 0;
    }
}
