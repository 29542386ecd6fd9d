using System.Runtime.InteropServices;

namespace XCall.Marshal;

/// <summary>A list of any supported type: count, then each element through its marshaller.</summary>
public abstract class ListMarshaller<T, TMarshaller> : IMarshaller<List<T>?> where TMarshaller : IMarshaller<T>
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, List<T>? value)
    {
        if (value is null)
        {
            writer.WriteLength(WireFormat.NullLength);
            return;
        }
        ReadOnlySpan<T> items = CollectionsMarshal.AsSpan(value);
        writer.WriteLength(items.Length);
        foreach (T item in items)
        {
            TMarshaller.Write(ref writer, item);
        }
    }

    /// <inheritdoc/>
    public static List<T>? Read(ref MarshalReader reader)
    {
        int length = reader.ReadLength();
        if (length == WireFormat.NullLength)
        {
            return null;
        }
        var list = new List<T>(length);
        CollectionsMarshal.SetCount(list, length);
        Span<T> items = CollectionsMarshal.AsSpan(list);
        for (int i = 0; i < items.Length; i++)
        {
            items[i] = TMarshaller.Read(ref reader);
        }
        return list;
    }
}
