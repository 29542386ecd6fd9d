using System.Buffers;
using System.Runtime.CompilerServices;

namespace XCall.Marshal;

/// <summary>
/// <see cref="ArrayPool{T}.Shared"/> for arrays up to <see cref="MaxPooledBytes"/>; a larger array is allocated
/// when asked for and left to the GC when given back. The shared pool keeps what it is given (per core, across
/// full collections, until it has gone unused for about a minute), so one 512 MiB message would otherwise keep
/// its buffers alive long after it was read. The transports and the call runtime rent their frame, argument
/// and send buffers here.
/// </summary>
public static class BoundedArrayPool
{
    /// <summary>Largest array, in bytes, that goes back to the shared pool: 8 MiB.</summary>
    public const int MaxPooledBytes = 8 << 20;

    /// <summary>An array of at least <paramref name="minimumLength"/> elements: from the shared pool up to
    /// <see cref="MaxPooledBytes"/>, else a new array of exactly that length.</summary>
    public static T[] Rent<T>(int minimumLength)
    {
        if ((long)minimumLength * Unsafe.SizeOf<T>() <= MaxPooledBytes)
        {
            return ArrayPool<T>.Shared.Rent(minimumLength);
        }
        return GC.AllocateUninitializedArray<T>(minimumLength);
    }

    /// <summary>Gives back an array from <see cref="Rent{T}"/>: to the shared pool up to <see cref="MaxPooledBytes"/>,
    /// else to the GC.</summary>
    public static void Return<T>(T[] array)
    {
        ArgumentNullException.ThrowIfNull(array);
        if ((long)array.Length * Unsafe.SizeOf<T>() <= MaxPooledBytes)
        {
            ArrayPool<T>.Shared.Return(array, clearArray: RuntimeHelpers.IsReferenceOrContainsReferences<T>());
        }
    }

    /// <summary>
    /// Gives back one of the many arrays of one message (the chunks of a large frame): to the shared pool while
    /// the bytes given back through <paramref name="pooledBytes"/> stay within <see cref="MaxPooledBytes"/>, else to
    /// the GC. The pool would keep dozens of arrays of one size, so a frame of many chunks would otherwise leave
    /// most of itself there.
    /// </summary>
    public static void Return<T>(T[] array, ref long pooledBytes)
    {
        ArgumentNullException.ThrowIfNull(array);
        long bytes = (long)array.Length * Unsafe.SizeOf<T>();
        if (pooledBytes + bytes <= MaxPooledBytes)
        {
            pooledBytes += bytes;
            ArrayPool<T>.Shared.Return(array, clearArray: RuntimeHelpers.IsReferenceOrContainsReferences<T>());
        }
    }
}
