namespace XCall.Marshal;

/// <summary>A dictionary: count, then key and value pairs through their marshallers. A duplicate or null key is a protocol error.</summary>
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
        var dictionary = new Dictionary<TKey, TValue>(length);
        for (int i = 0; i < length; i++)
        {
            TKey key = TKeyMarshaller.Read(ref reader);
            TValue value = TValueMarshaller.Read(ref reader);
            if (key is null || !dictionary.TryAdd(key, value))
            {
                throw new XCallProtocolException("Dictionary payload holds a null or duplicate key.");
            }
        }
        return dictionary;
    }
}
