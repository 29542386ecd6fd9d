using System.Buffers;
using System.Diagnostics;
using XCall.Marshal;

namespace XCall.Transport.Tcp;

/// <summary>
/// Bytes waiting to be sent: one owned chunk reused for every batch of frames, plus chunks rented from
/// <see cref="ArrayPool{T}"/> when a batch outgrows it. Growing never copies what is written, so a large
/// payload is copied once (from the caller into the chunks) before the kernel takes it with one gather write.
/// </summary>
/// <remarks>Not thread-safe: the owning channel guards it with its send lock.</remarks>
internal sealed class SendBuffer
{
    private const int MaxChunkSize = 4 * 1024 * 1024;

    private readonly byte[] _first;
    private byte[][] _chunks = new byte[4][];
    private int[] _used = new int[4];
    private int _count = 1;
    private readonly List<ArraySegment<byte>> _segments = [];

    public SendBuffer(int size)
    {
        _first = GC.AllocateUninitializedArray<byte>(size);
        _chunks[0] = _first;
    }

    /// <summary>Bytes written since the last <see cref="Reset"/>.</summary>
    public long Length { get; private set; }

    /// <summary>A position to roll back to (<see cref="Truncate"/>) or to patch at (<see cref="At"/>).</summary>
    public readonly record struct Mark(int Chunk, int Offset, long Length);

    /// <summary>The current end of the buffer.</summary>
    public Mark End => new(_count - 1, _used[_count - 1], Length);

    /// <summary>At least <paramref name="sizeHint"/> (and at least one) contiguous free bytes.</summary>
    public Span<byte> GetSpan(int sizeHint)
    {
        int last = _count - 1;
        int free = _chunks[last].Length - _used[last];
        if (free < sizeHint || free == 0)
        {
            AddChunk(sizeHint);
            last = _count - 1;
        }
        return _chunks[last].AsSpan(_used[last]);
    }

    /// <inheritdoc cref="GetSpan"/>
    public Memory<byte> GetMemory(int sizeHint)
    {
        GetSpan(sizeHint);
        int last = _count - 1;
        return _chunks[last].AsMemory(_used[last]);
    }

    public void Advance(int count)
    {
        int last = _count - 1;
        if ((uint)count > (uint)(_chunks[last].Length - _used[last]))
        {
            throw new ArgumentOutOfRangeException(nameof(count), count, "Advanced past the end of the span handed out.");
        }
        _used[last] += count;
        Length += count;
    }

    /// <summary>The <paramref name="length"/> bytes written at <paramref name="mark"/> (contiguous if they were written from one span).</summary>
    public Span<byte> At(Mark mark, int length) => _chunks[mark.Chunk].AsSpan(mark.Offset, length);

    /// <summary>Drops everything written after <paramref name="mark"/>.</summary>
    public void Truncate(Mark mark)
    {
        long pooled = 0;
        for (int i = mark.Chunk + 1; i < _count; i++)
        {
            ReturnChunk(i, ref pooled);
        }
        _count = mark.Chunk + 1;
        _used[mark.Chunk] = mark.Offset;
        Length = mark.Length;
        AssertInvariants();
    }

    /// <summary>Empties the buffer, returning rented chunks; the first chunk is kept for the next batch.</summary>
    public void Reset() => Truncate(new Mark(0, 0, 0));

    /// <summary>Sends everything written, in order.</summary>
    public void WriteTo(TcpLink link)
    {
        if (_count == 1)
        {
            link.Send(_first.AsSpan(0, _used[0]));
            return;
        }
        _segments.Clear();
        for (int i = 0; i < _count; i++)
        {
            if (_used[i] > 0)
            {
                _segments.Add(new ArraySegment<byte>(_chunks[i], 0, _used[i]));
            }
        }
        link.Send(_segments);
        _segments.Clear();
    }

    private void AddChunk(int sizeHint)
    {
        // Geometric growth bounds the chunk count of a large frame (64 MiB is about twenty chunks).
        long wanted = Math.Clamp(Math.Max(Length, _first.Length), _first.Length, MaxChunkSize);
        byte[] chunk = BoundedArrayPool.Rent<byte>((int)Math.Max(wanted, sizeHint));
        if (_count == _chunks.Length)
        {
            Array.Resize(ref _chunks, _count * 2);
            Array.Resize(ref _used, _count * 2);
        }
        _chunks[_count] = chunk;
        _used[_count] = 0;
        _count++;
    }

    private void ReturnChunk(int index, ref long pooled)
    {
        BoundedArrayPool.Return(_chunks[index], ref pooled);
        _chunks[index] = null!;
        _used[index] = 0;
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        long total = 0;
        for (int i = 0; i < _count; i++)
        {
            Debug.Assert(_used[i] <= _chunks[i].Length);
            total += _used[i];
        }
        Debug.Assert(total == Length);
    }
}
