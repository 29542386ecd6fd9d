using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace XCall.Transport.Tcp;

/// <summary>
/// The bytes of the TCP wire: the preamble each side sends once, and the prefix of every frame (int32
/// little-endian payload length, then the 24-byte <see cref="FrameHeader"/>). src/Transport.Tcp/README.md, "Wire".
/// </summary>
internal static class FrameCodec
{
    /// <summary>Bytes of the payload length that starts every frame.</summary>
    public const int LengthSize = sizeof(int);

    /// <summary>Length plus header: what precedes every payload.</summary>
    public const int PrefixSize = LengthSize + FrameHeader.Size;

    /// <summary>"XCAL", the first four bytes of the preamble.</summary>
    public const uint PreambleMagic = 0x4C414358; // 'X' 'C' 'A' 'L' read little-endian

    /// <summary>Version of the TCP transport (preamble and framing); independent of the frame header version.</summary>
    public const ushort TransportVersion = 1;

    /// <summary>Magic, transport version (uint16), reserved (uint16, zero).</summary>
    public const int PreambleSize = 8;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void WritePrefix(Span<byte> destination, int payloadLength, in FrameHeader header)
    {
        if (BitConverter.IsLittleEndian && Unsafe.SizeOf<FrameHeader>() == FrameHeader.Size)
        {
            // Pack=1 sequential: the struct's bytes are the wire header on a little-endian machine.
            ref byte dst = ref MemoryMarshal.GetReference(destination[..PrefixSize]);
            Unsafe.WriteUnaligned(ref dst, payloadLength);
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref dst, LengthSize), header);
            return;
        }
        WritePrefixPortable(destination, payloadLength, header);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void PatchLength(Span<byte> prefix, int payloadLength) =>
        BinaryPrimitives.WriteInt32LittleEndian(prefix, payloadLength);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int ReadLength(ReadOnlySpan<byte> source) => BinaryPrimitives.ReadInt32LittleEndian(source);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static FrameHeader ReadHeader(ReadOnlySpan<byte> source)
    {
        if (BitConverter.IsLittleEndian && Unsafe.SizeOf<FrameHeader>() == FrameHeader.Size)
        {
            return Unsafe.ReadUnaligned<FrameHeader>(ref MemoryMarshal.GetReference(source[..FrameHeader.Size]));
        }
        return ReadHeaderPortable(source);
    }

    public static void WritePreamble(Span<byte> destination)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(destination, PreambleMagic);
        BinaryPrimitives.WriteUInt16LittleEndian(destination[4..], TransportVersion);
        BinaryPrimitives.WriteUInt16LittleEndian(destination[6..], 0);
    }

    private static void WritePrefixPortable(Span<byte> destination, int payloadLength, in FrameHeader header)
    {
        BinaryPrimitives.WriteInt32LittleEndian(destination, payloadLength);
        Span<byte> h = destination.Slice(LengthSize, FrameHeader.Size);
        h[0] = (byte)header.Kind;
        h[1] = header.Version;
        BinaryPrimitives.WriteUInt16LittleEndian(h[2..], header.Flags);
        BinaryPrimitives.WriteUInt32LittleEndian(h[4..], header.MethodId);
        BinaryPrimitives.WriteUInt64LittleEndian(h[8..], header.CallId);
        BinaryPrimitives.WriteUInt64LittleEndian(h[16..], header.ObjectId);
    }

    private static FrameHeader ReadHeaderPortable(ReadOnlySpan<byte> h) => new()
    {
        Kind = (FrameKind)h[0],
        Version = h[1],
        Flags = BinaryPrimitives.ReadUInt16LittleEndian(h[2..]),
        MethodId = BinaryPrimitives.ReadUInt32LittleEndian(h[4..]),
        CallId = BinaryPrimitives.ReadUInt64LittleEndian(h[8..]),
        ObjectId = BinaryPrimitives.ReadUInt64LittleEndian(h[16..]),
    };
}
