using System.Buffers.Binary;
using System.Runtime.CompilerServices;

namespace XCall.Transport.Shm.Ring;

/// <summary>Reads and writes the 24-byte <see cref="FrameHeader"/> at fixed little-endian offsets:
/// kind (0), version (1), flags (2), method id (4), call id (8), object id (16).</summary>
internal static unsafe class FrameHeaderCodec
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Write(byte* p, in FrameHeader header)
    {
        p[0] = (byte)header.Kind;
        p[1] = header.Version;
        Unsafe.WriteUnaligned(p + 2, LittleEndian(header.Flags));
        Unsafe.WriteUnaligned(p + 4, LittleEndian(header.MethodId));
        Unsafe.WriteUnaligned(p + 8, LittleEndian(header.CallId));
        Unsafe.WriteUnaligned(p + 16, LittleEndian(header.ObjectId));
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static FrameHeader Read(byte* p) =>
        new(
            (FrameKind)p[0],
            LittleEndian(Unsafe.ReadUnaligned<ulong>(p + 8)),
            LittleEndian(Unsafe.ReadUnaligned<ulong>(p + 16)),
            LittleEndian(Unsafe.ReadUnaligned<uint>(p + 4)),
            LittleEndian(Unsafe.ReadUnaligned<ushort>(p + 2)))
        {
            Version = p[1],
        };

    private static ushort LittleEndian(ushort v) => BitConverter.IsLittleEndian ? v : BinaryPrimitives.ReverseEndianness(v);

    private static uint LittleEndian(uint v) => BitConverter.IsLittleEndian ? v : BinaryPrimitives.ReverseEndianness(v);

    private static ulong LittleEndian(ulong v) => BitConverter.IsLittleEndian ? v : BinaryPrimitives.ReverseEndianness(v);
}
