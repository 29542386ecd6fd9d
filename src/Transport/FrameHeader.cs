using System.Runtime.InteropServices;

namespace XCall.Transport;

/// <summary>
/// The 24-byte header of every frame, little-endian, the same on every transport. The payload length
/// is carried by the transport (a ring record's length, a TCP length prefix).
/// </summary>
[StructLayout(LayoutKind.Sequential, Pack = 1)]
public readonly record struct FrameHeader
{
    /// <summary>Wire format version this build writes and accepts.</summary>
    public const byte CurrentVersion = 1;

    /// <summary>Size of the header in bytes.</summary>
    public const int Size = 24;

    /// <summary>Creates a header.</summary>
    public FrameHeader(FrameKind kind, ulong callId, ulong objectId, uint methodId, ushort flags = 0)
    {
        Kind = kind;
        Version = CurrentVersion;
        Flags = flags;
        MethodId = methodId;
        CallId = callId;
        ObjectId = objectId;
    }

    /// <summary>What the frame carries.</summary>
    public FrameKind Kind { get; init; }

    /// <summary>Format version; a frame of another version is a protocol error.</summary>
    public byte Version { get; init; }

    /// <summary>Bits of <see cref="FrameFlags"/>; any other bit, or a flag on a frame it does not apply to, is a protocol error.</summary>
    public ushort Flags { get; init; }

    /// <summary>Stable id of the method (hash of its signature).</summary>
    public uint MethodId { get; init; }

    /// <summary>Id that pairs a reply, error or cancel with its call; 0 for one-way calls.</summary>
    public ulong CallId { get; init; }

    /// <summary>The target object on the receiving side (0 = the connection's root service).</summary>
    public ulong ObjectId { get; init; }
}
