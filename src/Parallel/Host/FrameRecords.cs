using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using XCall.Marshal;
using XCall.Transport;

namespace XCall.Parallel.Host;

/// <summary>
/// The encoding of frames inside a batch. A full record: a 4-byte payload length (0 or more), the 24-byte
/// <see cref="FrameHeader"/> as the transports lay it out, then the payload. A short record, for a one-way call
/// whose header equals the record before's but for the method: the complement of its payload length (negative),
/// the 4-byte method id, then the payload; it stands for the header before with that method id. Both ends run
/// this build, so the layout is this process's.
/// </summary>
internal static class FrameRecords
{
    /// <summary>Bytes before a full record's payload.</summary>
    public const int Prefix = sizeof(int) + FrameHeader.Size;

    /// <summary>Bytes before a short record's payload.</summary>
    public const int ShortPrefix = sizeof(int) + sizeof(uint);

    /// <summary>Writes a full record's prefix at the start of <paramref name="buffer"/> once its payload length is known.</summary>
    public static void WritePrefix(Span<byte> buffer, in FrameHeader header, int payloadLength)
    {
        MemoryMarshal.Write(buffer, in payloadLength);
        MemoryMarshal.Write(buffer[sizeof(int)..], in header);
    }

    /// <summary>
    /// Writes a short record's prefix at <paramref name="prefix"/> once its payload length is known; the caller reserved
    /// its <see cref="ShortPrefix"/> bytes there, so nothing is bounds-checked (the one-way hot path).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void WriteShortPrefix(ref byte prefix, uint methodId, int payloadLength)
    {
        Unsafe.WriteUnaligned(ref prefix, ~payloadLength);
        Unsafe.WriteUnaligned(ref Unsafe.Add(ref prefix, sizeof(int)), methodId);
    }

    /// <summary>
    /// Whether the first record of <paramref name="records"/> is a short one whose payload lies within them: then its
    /// method id and payload length. The one decoder of a short record's prefix; whether a short record may stand where
    /// it is (after a one-way call) is the caller's to check.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool TryReadShort(ReadOnlySpan<byte> records, out uint methodId, out int payloadLength)
    {
        if (records.Length >= ShortPrefix)
        {
            int word = MemoryMarshal.Read<int>(records);
            if (word < 0 && ~word <= records.Length - ShortPrefix)
            {
                methodId = MemoryMarshal.Read<uint>(records[sizeof(int)..]);
                payloadLength = ~word;
                return true;
            }
        }
        methodId = 0;
        payloadLength = 0;
        return false;
    }

    /// <summary>Whether a one-way call with <paramref name="header"/> may follow a record of <paramref name="previous"/> as a short record.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool MayShorten(in FrameHeader header, in FrameHeader previous) =>
        header.Kind == FrameKind.OneWay && previous.Kind == FrameKind.OneWay && header.ObjectId == previous.ObjectId
        && header.Flags == previous.Flags && header.CallId == previous.CallId && header.Version == previous.Version;

    /// <summary>Hands each frame of <paramref name="records"/> to <paramref name="handler"/>, in order.</summary>
    /// <exception cref="XCallProtocolException">A record's length runs past the end of <paramref name="records"/>, or a short record follows no one-way frame.</exception>
    public static void Deliver(ReadOnlySpan<byte> records, IFrameHandler handler)
    {
        FrameHeader previous = default;
        while (!records.IsEmpty)
        {
            FrameHeader header = Read(ref records, previous, out ReadOnlySpan<byte> payload);
            previous = header;
            var reader = new MarshalReader(payload, handler.Limits);
            handler.OnFrame(header, ref reader);
        }
    }

    /// <summary>Reads the first record of <paramref name="records"/>, which must be a full one, and moves past it.</summary>
    /// <exception cref="XCallProtocolException">The record is short or its length runs past the end of <paramref name="records"/>.</exception>
    public static FrameHeader Read(ref ReadOnlySpan<byte> records, out ReadOnlySpan<byte> payload) => Read(ref records, default, out payload);

    /// <summary>
    /// Reads the first record of <paramref name="records"/> and moves past it; a short record stands for
    /// <paramref name="previous"/>, the header of the record before it, with its own method id.
    /// </summary>
    /// <exception cref="XCallProtocolException">
    /// The record's length runs past the end of <paramref name="records"/>, or it is short and <paramref name="previous"/> is no one-way call.
    /// </exception>
    public static FrameHeader Read(ref ReadOnlySpan<byte> records, scoped in FrameHeader previous, out ReadOnlySpan<byte> payload)
    {
        if (records.Length < ShortPrefix)
        {
            throw new XCallProtocolException($"A batch ends inside a frame's header ({records.Length} bytes left).");
        }
        int length = MemoryMarshal.Read<int>(records);
        if (length < 0)
        {
            if (previous.Kind != FrameKind.OneWay)
            {
                throw new XCallProtocolException("A short record in a batch follows no one-way call.");
            }
            if (!TryReadShort(records, out uint methodId, out int shortLength))
            {
                throw new XCallProtocolException($"A frame in a batch claims {~length} bytes of payload; {records.Length - ShortPrefix} are left.");
            }
            payload = records.Slice(ShortPrefix, shortLength);
            records = records[(ShortPrefix + shortLength)..];
            return previous with { MethodId = methodId };
        }
        if (records.Length < Prefix)
        {
            throw new XCallProtocolException($"A batch ends inside a frame's header ({records.Length} bytes left).");
        }
        FrameHeader header = MemoryMarshal.Read<FrameHeader>(records[sizeof(int)..]);
        if (length > records.Length - Prefix)
        {
            throw new XCallProtocolException($"A frame in a batch claims {length} bytes of payload; {records.Length - Prefix} are left.");
        }
        payload = records.Slice(Prefix, length);
        records = records[(Prefix + length)..];
        return header;
    }
}
