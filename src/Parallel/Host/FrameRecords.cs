using System.Buffers;
using System.Runtime.InteropServices;
using XCall.Marshal;
using XCall.Transport;

namespace XCall.Parallel.Host;

/// <summary>
/// The encoding of frames inside a batch: per frame a 4-byte payload length, the 24-byte <see cref="FrameHeader"/>
/// as the transports lay it out, then the payload. Both ends run this build, so the layout is this process's.
/// </summary>
internal static class FrameRecords
{
    /// <summary>Bytes before a frame's payload.</summary>
    public const int Prefix = sizeof(int) + FrameHeader.Size;

    /// <summary>Writes a record's prefix at the start of <paramref name="buffer"/> once its payload length is known.</summary>
    public static void WritePrefix(Span<byte> buffer, in FrameHeader header, int payloadLength)
    {
        MemoryMarshal.Write(buffer, in payloadLength);
        MemoryMarshal.Write(buffer[sizeof(int)..], in header);
    }

    /// <summary>Hands each frame of <paramref name="records"/> to <paramref name="handler"/>, in order.</summary>
    /// <exception cref="XCallProtocolException">A record's length runs past the end of <paramref name="records"/>.</exception>
    public static void Deliver(ReadOnlySpan<byte> records, IFrameHandler handler)
    {
        while (!records.IsEmpty)
        {
            FrameHeader header = Read(ref records, out ReadOnlySpan<byte> payload);
            var reader = new MarshalReader(payload, handler.Limits);
            handler.OnFrame(header, ref reader);
        }
    }

    /// <summary>Reads the first record of <paramref name="records"/> and moves past it.</summary>
    /// <exception cref="XCallProtocolException">The record's length runs past the end of <paramref name="records"/>.</exception>
    public static FrameHeader Read(ref ReadOnlySpan<byte> records, out ReadOnlySpan<byte> payload)
    {
        if (records.Length < Prefix)
        {
            throw new XCallProtocolException($"A batch ends inside a frame's header ({records.Length} bytes left).");
        }
        int length = MemoryMarshal.Read<int>(records);
        FrameHeader header = MemoryMarshal.Read<FrameHeader>(records[sizeof(int)..]);
        if (length < 0 || length > records.Length - Prefix)
        {
            throw new XCallProtocolException($"A frame in a batch claims {length} bytes of payload; {records.Length - Prefix} are left.");
        }
        payload = records.Slice(Prefix, length);
        records = records[(Prefix + length)..];
        return header;
    }
}
