namespace XCall.Marshal;

/// <summary>
/// A hash set of any supported type: count, then each element through its marshaller. A duplicate element is a
/// protocol error. The set arrives with the default comparer; while a mutable object of the
/// graph still waits for its members, elements that may be objects are added once every object is complete.
/// </summary>
public abstract class HashSetMarshaller<T, TMarshaller> : IMarshaller<HashSet<T>?> where TMarshaller : IMarshaller<T>
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, HashSet<T>? value)
    {
        if (value is null)
        {
            writer.WriteLength(WireFormat.NullLength);
            return;
        }
        writer.WriteLength(value.Count);
        foreach (T item in value)
        {
            TMarshaller.Write(ref writer, item);
        }
    }

    /// <inheritdoc/>
    public static HashSet<T>? Read(ref MarshalReader reader)
    {
        int length = reader.ReadLength();
        if (length == WireFormat.NullLength)
        {
            return null;
        }
        var set = new HashSet<T>(WireCount.InitialCapacity(length));
        if (GraphKeys.MayBeIncomplete<T>())
        {
            // Elements may be objects whose members are not read yet (value equality would hash them
            // empty): read them all first, then add them now or once the graph is complete.
            T[] items = WireCount.ReadArray<T, TMarshaller>(ref reader, length);
            if (reader.HasIncompleteObjects)
            {
                reader.WhenGraphComplete(() => AddAll(set, items));
            }
            else
            {
                AddAll(set, items);
            }
            return set;
        }
        for (int i = 0; i < length; i++)
        {
            Add(set, TMarshaller.Read(ref reader));
        }
        return set;
    }

    private static void AddAll(HashSet<T> set, T[] items)
    {
        foreach (T item in items)
        {
            Add(set, item);
        }
    }

    private static void Add(HashSet<T> set, T item)
    {
        if (!set.Add(item))
        {
            throw new XCallProtocolException("Hash set payload holds a duplicate element.");
        }
    }
}
