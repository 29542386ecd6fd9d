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
        return length == WireFormat.NullLength ? null : ReadItems(ref reader, new List<T>(WireCount.InitialCapacity(length)), length);
    }

    /// <summary>
    /// Reads a list like <see cref="Read"/>, into <paramref name="fresh"/> when it is an empty list: the one
    /// the constructor of the object being read gave the member, which nothing else holds, so the object
    /// does not pay for a second list. Generated code passes a member only when its declaration proves
    /// that (an empty <c>[]</c> or <c>new()</c> initializer and no constructor of its own).
    /// </summary>
    public static List<T>? ReadInto(ref MarshalReader reader, List<T>? fresh)
    {
        int length = reader.ReadLength();
        if (length == WireFormat.NullLength)
        {
            return null;
        }
        if (fresh is not { Count: 0 })
        {
            return ReadItems(ref reader, new List<T>(WireCount.InitialCapacity(length)), length);
        }
        if (fresh.Capacity < WireCount.InitialCapacity(length))
        {
            fresh.Capacity = WireCount.InitialCapacity(length);
        }
        return ReadItems(ref reader, fresh, length);
    }

    private static List<T> ReadItems(ref MarshalReader reader, List<T> list, int length)
    {
        if (length <= list.Capacity)
        {
            CollectionsMarshal.SetCount(list, length);
            Span<T> items = CollectionsMarshal.AsSpan(list);
            for (int i = 0; i < items.Length; i++)
            {
                items[i] = TMarshaller.Read(ref reader);
            }
            return list;
        }
        // More than is allocated up front (WireCount): the list grows as elements arrive.
        for (int i = 0; i < length; i++)
        {
            list.Add(TMarshaller.Read(ref reader));
        }
        return list;
    }
}
