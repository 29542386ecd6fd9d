using System.Buffers;

namespace XCall.Transport.Shm.Ring;

/// <summary>
/// <see cref="Memory{T}"/> over ring space for <see cref="IBufferWriter{T}.GetMemory"/>. One instance per
/// writer, re-pointed on every call: like any buffer writer's memory, it is valid until the next Advance.
/// </summary>
internal sealed unsafe class RingMemory : MemoryManager<byte>
{
    private byte* _pointer;
    private int _length;

    public Memory<byte> Wrap(byte* pointer, int length)
    {
        _pointer = pointer;
        _length = length;
        return CreateMemory(length);
    }

    public override Span<byte> GetSpan() => new(_pointer, _length);

    public override MemoryHandle Pin(int elementIndex = 0) => new(_pointer + elementIndex);

    public override void Unpin()
    {
    }

    protected override void Dispose(bool disposing)
    {
    }
}
