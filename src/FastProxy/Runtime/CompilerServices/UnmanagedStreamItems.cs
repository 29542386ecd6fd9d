using System.ComponentModel;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using XCall.Marshal;

namespace XCall.Runtime.CompilerServices;

/// <summary>Stream items of an unmanaged type: a batch is a count and one block copy of
/// <see cref="ConnectionOptions.StreamBatchBytes"/> at most.</summary>
/// <typeparam name="T">The item type.</typeparam>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class UnmanagedStreamItems<T> : IStreamItems<T> where T : unmanaged
{
    /// <inheritdoc/>
    public static int BatchItems(ConnectionOptions options) => Math.Max(1, options.StreamBatchBytes / Unsafe.SizeOf<T>());

    /// <inheritdoc/>
    public static void WriteBatch(ref MarshalWriter writer, ReadOnlySpan<T> items) => writer.WriteSpan(items);

    /// <inheritdoc/>
    public static int ReadBatch(ref MarshalReader reader, T[] items)
    {
        int count = reader.ReadLength(Unsafe.SizeOf<T>());
        if ((uint)count > (uint)items.Length)
        {
            StreamErrors.ThrowBatchTooLarge(count, items.Length);
        }
        reader.ReadBlock(MemoryMarshal.AsBytes(items.AsSpan(0, count)));
        return count;
    }

    /// <inheritdoc/>
    public static T CopyItem(T item, Domain.DomainLink link) => item;
}
