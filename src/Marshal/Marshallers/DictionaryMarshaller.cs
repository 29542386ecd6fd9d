using System.Runtime.CompilerServices;

namespace XCall.Marshal;

/// <summary>
/// A dictionary: count, then key and value pairs through their marshallers. A duplicate or null key is a
/// protocol error. The dictionary arrives with the default comparer. While a mutable object of the graph still
/// waits for its members, keys that may be objects are added once every object is complete, so their hash
/// codes see their members.
/// </summary>
public abstract class DictionaryMarshaller<TKey, TKeyMarshaller, TValue, TValueMarshaller> : IMarshaller<Dictionary<TKey, TValue>?>
    where TKey : notnull
    where TKeyMarshaller : IMarshaller<TKey>
    where TValueMarshaller : IMarshaller<TValue>
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, Dictionary<TKey, TValue>? value)
    {
        if (value is null)
        {
            writer.WriteLength(WireFormat.NullLength);
            return;
        }
        writer.WriteLength(value.Count);
        foreach (KeyValuePair<TKey, TValue> pair in value)
        {
            TKeyMarshaller.Write(ref writer, pair.Key);
            TValueMarshaller.Write(ref writer, pair.Value);
        }
    }

    /// <inheritdoc/>
    public static Dictionary<TKey, TValue>? Read(ref MarshalReader reader)
    {
        int length = reader.ReadLength(minElementSize: 2);
        if (length == WireFormat.NullLength)
        {
            return null;
        }
        bool incompleteKeys = GraphKeys.MayBeIncomplete<TKey>();
        if (!incompleteKeys && !KeySpread.Needed<TKey>(length, reader.Limits))
        {
            // Strings, or a few values: added as they are read.
            var few = new Dictionary<TKey, TValue>(WireCount.InitialCapacity(length));
            for (int i = 0; i < length; i++)
            {
                TKey key = TKeyMarshaller.Read(ref reader);
                Add(few, key, TValueMarshaller.Read(ref reader));
            }
            return few;
        }
        // Every pair first: keys that may be objects are hashed only once the graph is complete (value
        // equality would hash them empty), and many keys are counted per bucket before any is added.
        var pairs = new KeyValuePair<TKey, TValue>[WireCount.InitialCapacity(length)];
        for (int i = 0; i < length; i++)
        {
            WireCount.EnsureRoom(ref pairs, i, length);
            TKey key = TKeyMarshaller.Read(ref reader);
            pairs[i] = new KeyValuePair<TKey, TValue>(key, TValueMarshaller.Read(ref reader));
        }
        var dictionary = new Dictionary<TKey, TValue>(length); // the bytes are read: the count is real
        MarshalLimits limits = reader.Limits;
        if (incompleteKeys && reader.HasIncompleteObjects)
        {
            reader.WhenGraphComplete(() => AddAll(dictionary, pairs, limits));
        }
        else
        {
            AddAll(dictionary, pairs, limits);
        }
        return dictionary;
    }

    private static void AddAll(Dictionary<TKey, TValue> dictionary, KeyValuePair<TKey, TValue>[] pairs, MarshalLimits limits)
    {
        if (KeySpread.Needed<TKey>(pairs.Length, limits))
        {
            KeySpread spread = KeySpread.For(dictionary.EnsureCapacity(0), limits);
            foreach (KeyValuePair<TKey, TValue> pair in pairs)
            {
                spread.Add(pair.Key);
            }
        }
        foreach (KeyValuePair<TKey, TValue> pair in pairs)
        {
            Add(dictionary, pair.Key, pair.Value);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Add(Dictionary<TKey, TValue> dictionary, TKey key, TValue value)
    {
        if (key is null || !dictionary.TryAdd(key, value))
        {
            throw new XCallProtocolException("Dictionary payload holds a null or duplicate key.");
        }
    }
}
