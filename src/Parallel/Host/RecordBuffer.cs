using System.Buffers;

namespace XCall.Parallel.Host;

/// <summary>A growable byte buffer frames are written into (an <see cref="IBufferWriter{T}"/> that keeps its array).</summary>
internal sealed class RecordBuffer : IBufferWriter<byte>
{
    private byte[] _bytes;

    public RecordBuffer(int capacity) => _bytes = new byte[capacity];

    public int Length { get; set; }

    public Span<byte> Written => _bytes.AsSpan(0, Length);

    public void Advance(int count) => Length += count;

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _bytes.AsMemory(Length);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _bytes.AsSpan(Length);
    }

    /// <summary>Reserves <paramref name="count"/> bytes at the end and returns where they start.</summary>
    public int Reserve(int count)
    {
        Ensure(count);
        int start = Length;
        Length += count;
        return start;
    }

    public byte[] ToArray() => Written.ToArray();

    private void Ensure(int sizeHint)
    {
        int need = Length + Math.Max(sizeHint, 1);
        if (need > _bytes.Length)
        {
            Array.Resize(ref _bytes, Math.Max(need, _bytes.Length * 2));
        }
    }
}
