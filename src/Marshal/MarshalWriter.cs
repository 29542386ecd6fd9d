using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace XCall.Marshal;

/// <summary>
/// Writes XCall's wire format straight into transport memory: a fixed span, or an
/// <see cref="IBufferWriter{T}"/> (a ring or a pooled socket buffer) that hands out more space when the
/// current span is full. Values are little-endian; unmanaged values and arrays of them are one block copy.
/// Call <see cref="Flush"/> when done so the last span is committed to the buffer writer: it also ends
/// the message's object graph (see <see cref="WriteReference"/>).
/// </summary>
public ref partial struct MarshalWriter
{
    // A block up to this size that does not fit in the current span asks the buffer writer for one span that
    // holds it whole (larger blocks are written through whatever spans come).
    private const int ContiguousBlockLimit = 1 << 20;

    private Span<byte> _span;
    private int _pos;
    private readonly IBufferWriter<byte>? _output;
    private long _flushed;
    private int _depth;
    private GraphWriteState? _graph;
    private object? _first;
    private int _firstId;
    private bool _firstBuilding;
    private bool _firstByValue; // whether the first object's type compares by value (GraphType.ComparesByValue)
    private int _current; // position of the object whose members are being written (0: the first object)
    private bool _currentByValue; // whether that object's type compares by value
    private int _nextId;
    private int _active;

    /// <summary>Writes into a fixed span; running out of room raises <see cref="InvalidOperationException"/>.</summary>
    public MarshalWriter(Span<byte> destination)
    {
        _span = destination;
        _output = null;
    }

    /// <summary>Writes into <paramref name="output"/>, asking it for more space as needed.</summary>
    public MarshalWriter(IBufferWriter<byte> output)
    {
        _output = output;
        _span = output.GetSpan();
    }

    /// <summary>
    /// What the message is written for, for marshallers that need more than the bytes (the connection, so
    /// an object reference can expose its object there). Null when the message is not sent anywhere.
    /// </summary>
    public object? Context { readonly get; set; }

    /// <summary>
    /// The limits of the reader the message is for (null: <see cref="MarshalLimits.Default"/>). What that reader would
    /// refuse (a string longer than <see cref="MarshalLimits.MaxStringLength"/>, a graph deeper than
    /// <see cref="MarshalLimits.MaxDepth"/>) the writer refuses first, with <see cref="XCallException"/>: the message
    /// fails before it is sent, instead of the reader closing the connection over it.
    /// </summary>
    public MarshalLimits? Limits { readonly get; set; }

    /// <summary>Bytes written so far, committed or not.</summary>
    public readonly long BytesWritten => _flushed + _pos;

    /// <summary>The bytes written into a fixed span so far (only meaningful without a buffer writer).</summary>
    public readonly ReadOnlySpan<byte> WrittenSpan => _span[.._pos];

    /// <summary>
    /// Commits what is written to the buffer writer and ends the message's object graph: objects written
    /// after a flush are new objects again (their ids continue, so a reader of both parts stays in step).
    /// </summary>
    public void Flush()
    {
        if (_first is not null)
        {
            EndGraph();
        }
        Commit();
    }

    private void Commit()
    {
        if (_output is not null && _pos > 0)
        {
            _output.Advance(_pos);
            _flushed += _pos;
            _span = default;
            _pos = 0;
        }
    }

    /// <summary>Writes an unmanaged value as its in-memory bytes.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Write<T>(T value) where T : unmanaged
    {
        int size = Unsafe.SizeOf<T>();
        if ((uint)(_span.Length - _pos) < (uint)size)
        {
            Grow(size);
        }
        ref byte destination = ref Unsafe.Add(ref MemoryMarshal.GetReference(_span), _pos);
        if (!typeof(T).IsPrimitive && !typeof(T).IsEnum)
        {
            // A struct may have padding the JIT does not copy: clear it so no stale transport bytes
            // go out and the encoding is deterministic. Folded away for primitives and enums.
            Unsafe.InitBlockUnaligned(ref destination, 0, (uint)size);
        }
        Unsafe.WriteUnaligned(ref destination, value);
        _pos += size;
    }

    /// <summary>Writes a 32-bit little-endian integer.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void WriteInt32(int value) => Write(value);

    /// <summary>Writes one byte.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void WriteByte(byte value) => Write(value);

    /// <summary>Writes a boolean as one byte, 0 or 1.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void WriteBoolean(bool value) => Write(value ? (byte)1 : (byte)0);

    /// <summary>Writes a collection or string length, or <see cref="WireFormat.NullLength"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void WriteLength(int length) => Write(length);

    /// <summary>Writes a presence tag for a nullable value or reference: 0 null, 1 present.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void WritePresence(bool present) => Write(present ? WireFormat.Present : WireFormat.Null);

    /// <summary>Writes a nullable unmanaged value: a presence byte, then the value.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void WriteNullable<T>(T? value) where T : unmanaged
    {
        if (value.HasValue)
        {
            Write(WireFormat.Present);
            Write(value.GetValueOrDefault());
        }
        else
        {
            Write(WireFormat.Null);
        }
    }

    /// <summary>Writes a string as its length in UTF-16 code units and the code units; null is distinct from empty.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void WriteString(string? value)
    {
        if (value is null)
        {
            Write(WireFormat.NullLength);
            return;
        }
        if (value.Length > (Limits ?? MarshalLimits.Default).MaxStringLength)
        {
            ThrowHelper.WriterStringTooLong(value.Length, (Limits ?? MarshalLimits.Default).MaxStringLength);
        }
        int bytes = value.Length * sizeof(char);
        if ((uint)(_span.Length - _pos) >= (uint)(bytes + sizeof(int)))
        {
            ref byte dst = ref Unsafe.Add(ref MemoryMarshal.GetReference(_span), _pos);
            Unsafe.WriteUnaligned(ref dst, value.Length);
            CopyChars(ref Unsafe.Add(ref dst, sizeof(int)), ref Unsafe.As<char, byte>(ref MemoryMarshal.GetReference(value.AsSpan())), (uint)bytes);
            _pos += bytes + sizeof(int);
            return;
        }
        Write(value.Length);
        WriteBlock(MemoryMarshal.AsBytes(value.AsSpan()));
    }

    /// <summary>Copies the code units of a string: short ones (most names and keys) in at most two
    /// overlapping moves, without a call.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void CopyChars(ref byte destination, ref byte source, uint bytes)
    {
        if (bytes > 16)
        {
            Unsafe.CopyBlockUnaligned(ref destination, ref source, bytes);
        }
        else if (bytes >= 8)
        {
            Unsafe.WriteUnaligned(ref destination, Unsafe.ReadUnaligned<ulong>(ref source));
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref destination, bytes - 8), Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref source, bytes - 8)));
        }
        else if (bytes >= 4)
        {
            Unsafe.WriteUnaligned(ref destination, Unsafe.ReadUnaligned<uint>(ref source));
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref destination, bytes - 4), Unsafe.ReadUnaligned<uint>(ref Unsafe.Add(ref source, bytes - 4)));
        }
        else if (bytes != 0)
        {
            Unsafe.WriteUnaligned(ref destination, Unsafe.ReadUnaligned<ushort>(ref source)); // one UTF-16 code unit
        }
    }

    /// <summary>Writes a span of unmanaged values: a count and one block copy.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void WriteSpan<T>(scoped ReadOnlySpan<T> values) where T : unmanaged
    {
        Write(values.Length);
        WriteBlock(MemoryMarshal.AsBytes(values));
    }

    /// <summary>Writes an array of unmanaged values (null distinct from empty) as a count and one block copy.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void WriteArray<T>(T[]? values) where T : unmanaged
    {
        if (values is null)
        {
            Write(WireFormat.NullLength);
            return;
        }
        if ((long)values.Length * Unsafe.SizeOf<T>() >= LendFloor && TryLend(values, 0, values.Length))
        {
            return;
        }
        WriteSpan<T>(values);
    }

    /// <summary>
    /// Writes a <see cref="LentSpan{T}"/> in the array format: lent when it was built from an array and the buffer
    /// writer lends (see <see cref="IBlockLender"/>), else its values, fetched first when they are in the peer.
    /// </summary>
    public void WriteLent<T>(scoped LentSpan<T> values) where T : unmanaged
    {
        if (values.Array is { } array && (long)values.Length * Unsafe.SizeOf<T>() >= LendFloor && TryLend(array, values.Start, values.Length))
        {
            return;
        }
        if (values.TryGetSpan(out ReadOnlySpan<T> local))
        {
            WriteSpan(local);
            return;
        }
        // A block received from a peer and passed on: its values come here first.
        T[] copy = BoundedArrayPool.Rent<T>(values.Length);
        try
        {
            values.CopyTo(copy);
            WriteSpan<T>(copy.AsSpan(0, values.Length));
        }
        finally
        {
            BoundedArrayPool.Return(copy);
        }
    }

    // No transport lends a block smaller than this: below it the writer does not even ask.
    private const int LendFloor = 4096;

    /// <summary>
    /// Writes <paramref name="count"/> values of <paramref name="array"/> from <paramref name="start"/> as a lent block
    /// (count, address, ticket) when the buffer writer lends them (see <see cref="IBlockLender"/>); false when it does not.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryLend<T>(T[] array, int start, int count) where T : unmanaged
    {
        long bytes = (long)count * Unsafe.SizeOf<T>();
        if (_output is not IBlockLender lender || bytes < lender.MinimumLendBytes || !lender.TryLend(array, bytes, out ulong address, out ulong ticket))
        {
            return false;
        }
        Write(WireFormat.LentLength);
        Write(count);
        Write(address + (ulong)((long)start * Unsafe.SizeOf<T>()));
        Write(ticket);
        return true;
    }

    /// <summary>Writes a list of unmanaged values in the array format.</summary>
    public void WriteList<T>(List<T>? values) where T : unmanaged
    {
        if (values is null)
        {
            Write(WireFormat.NullLength);
            return;
        }
        WriteSpan<T>(CollectionsMarshal.AsSpan(values));
    }

    /// <summary>Writes a value through its marshaller.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void WriteValue<T, TMarshaller>(T value) where TMarshaller : IMarshaller<T>
        => TMarshaller.Write(ref this, value);

    /// <summary>
    /// Enters one level of object nesting. Past <see cref="MarshalLimits.MaxDepth"/> of <see cref="Limits"/> it
    /// raises <see cref="XCallException"/>: the graph is too deep for the reader, or it has a cycle.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void EnterObject()
    {
        if (++_depth > (Limits ?? MarshalLimits.Default).MaxDepth)
        {
            ThrowHelper.WriterTooDeep((Limits ?? MarshalLimits.Default).MaxDepth);
        }
    }

    /// <summary>Leaves one level of object nesting.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void ExitObject() => _depth--;

    /// <summary>Copies raw bytes, across as many spans of the buffer writer as needed.</summary>
    public void WriteBlock(scoped ReadOnlySpan<byte> source)
    {
        int free = _span.Length - _pos;
        if (source.Length <= free)
        {
            source.CopyTo(_span[_pos..]);
            _pos += source.Length;
            return;
        }
        WriteBlockSlow(source);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void WriteBlockSlow(scoped ReadOnlySpan<byte> source)
    {
        if (_output is not null && source.Length <= ContiguousBlockLimit)
        {
            // Ask for a span that holds the whole block: a ring then starts it after the wrap instead of splitting
            // it there, and the reader can hand it out in place (MarshalReader.ReadSpanInPlace). A writer may
            // give less (a ring gives at most a quarter of itself): the loop goes on in further spans.
            Commit();
            _span = _output.GetSpan(source.Length);
        }
        while (!source.IsEmpty)
        {
            int free = _span.Length - _pos;
            if (free == 0)
            {
                Grow(1);
                free = _span.Length - _pos;
            }
            int n = Math.Min(free, source.Length);
            source[..n].CopyTo(_span[_pos..]);
            _pos += n;
            source = source[n..];
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Grow(int size)
    {
        if (_output is null)
        {
            ThrowHelper.WriterFull(size);
        }
        Commit();
        _span = _output.GetSpan(size);
        if (_span.Length < size)
        {
            ThrowHelper.WriterFull(size);
        }
    }
}
