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
        bool incomplete = GraphKeys.MayBeIncomplete<T>();
        if (!incomplete && !KeySpread.Needed<T>(length, reader.Limits))
        {
            // Strings, or a few values: added as they are read.
            var few = new HashSet<T>(WireCount.InitialCapacity(length));
            for (int i = 0; i < length; i++)
            {
                Add(few, TMarshaller.Read(ref reader));
            }
            return few;
        }
        // Every element first: elements that may be objects are hashed only once the graph is complete (value
        // equality would hash them empty), and many elements are counted per bucket before any is added.
        T[] items = WireCount.ReadArray<T, TMarshaller>(ref reader, length);
        var set = new HashSet<T>(length); // the bytes are read: the count is real
        MarshalLimits limits = reader.Limits;
        if (incomplete && reader.HasIncompleteObjects)
        {
            reader.WhenGraphComplete(() => AddAll(set, items, limits));
        }
        else
        {
            AddAll(set, items, limits);
        }
        return set;
    }

    private static void AddAll(HashSet<T> set, T[] items, MarshalLimits limits)
    {
        if (KeySpread.Needed<T>(items.Length, limits))
        {
            KeySpread spread = KeySpread.For(set.EnsureCapacity(0), limits);
            foreach (T item in items)
            {
                spread.Add(item);
            }
        }
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
