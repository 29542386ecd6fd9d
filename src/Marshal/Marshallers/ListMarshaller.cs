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
        writer.WriteLength(value.Count);
        foreach (T item in value)
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
        for (int i = 0; i < length; i++)
        {
            list.Add(TMarshaller.Read(ref reader));
        }
        return list;
    }
}
