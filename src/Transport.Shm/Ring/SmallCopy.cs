using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace XCall.Transport.Shm.Ring;

/// <summary>
/// Copies of the few bytes a small one-way call carries, inlined into the path that takes or writes the frame: a
/// <see cref="Span{T}.CopyTo"/> of a length the JIT does not know calls the general memmove, which costs more than
/// the copy at these sizes.
/// </summary>
internal static class SmallCopy
{
    /// <summary>The most bytes <see cref="Copy"/> is for; longer copies go through the general memmove.</summary>
    public const int MaxLength = 64;

    /// <summary>Copies <paramref name="source"/> (at most <see cref="MaxLength"/> bytes, else through memmove)
    /// to the start of <paramref name="destination"/>, reading and writing no byte outside either. The two must not
    /// overlap (a forward copy by words; the callers copy between the ring and a buffer of their own).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Copy(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Debug.Assert(!source.Overlaps(destination), "SmallCopy between overlapping spans");
        int length = source.Length;
        if (length > MaxLength || length > destination.Length)
        {
            source.CopyTo(destination); // throws when it does not fit, as CopyTo does
            return;
        }
        ref byte from = ref MemoryMarshal.GetReference(source);
        ref byte to = ref MemoryMarshal.GetReference(destination);
        int i = 0;
        for (; i + 8 <= length; i += 8)
        {
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref to, i), Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref from, i)));
        }
        if (i + 4 <= length)
        {
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref to, i), Unsafe.ReadUnaligned<uint>(ref Unsafe.Add(ref from, i)));
            i += 4;
        }
        if (i + 2 <= length)
        {
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref to, i), Unsafe.ReadUnaligned<ushort>(ref Unsafe.Add(ref from, i)));
            i += 2;
        }
        if (i < length)
        {
            Unsafe.Add(ref to, i) = Unsafe.Add(ref from, i);
        }
    }
}
