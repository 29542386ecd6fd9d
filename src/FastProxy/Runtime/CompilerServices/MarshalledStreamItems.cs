using System.ComponentModel;
using XCall.Marshal;

namespace XCall.Runtime.CompilerServices;

/// <summary>Stream items of any other type: a batch is a count and each item through its marshaller, at most
/// <see cref="ConnectionOptions.StreamBatchItems"/> items.</summary>
/// <typeparam name="T">The item type.</typeparam>
/// <typeparam name="TMarshaller">The item's marshaller.</typeparam>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class MarshalledStreamItems<T, TMarshaller> : IStreamItems<T> where TMarshaller : IMarshaller<T>
{
    /// <inheritdoc/>
    public static int BatchItems(ConnectionOptions options) => options.StreamBatchItems;

    /// <inheritdoc/>
    public static void WriteBatch(ref MarshalWriter writer, ReadOnlySpan<T> items)
    {
        writer.WriteLength(items.Length);
        foreach (T item in items)
        {
            TMarshaller.Write(ref writer, item);
        }
    }

    /// <inheritdoc/>
    public static int ReadBatch(ref MarshalReader reader, T[] items)
    {
        int count = reader.ReadLength();
        if (count > items.Length)
        {
            StreamErrors.ThrowBatchTooLarge(count, items.Length);
        }
        for (int i = 0; i < count; i++)
        {
            items[i] = TMarshaller.Read(ref reader);
        }
        return count;
    }

    /// <inheritdoc/>
    public static T CopyItem(T item, Domain.DomainLink link) => Domain.DomainCopy.Copy<T, TMarshaller>(item, link);
}
