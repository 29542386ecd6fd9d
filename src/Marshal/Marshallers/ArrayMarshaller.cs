namespace XCall.Marshal;

/// <summary>An array of any supported type: count, then each element through its marshaller.</summary>
public abstract class ArrayMarshaller<T, TMarshaller> : IMarshaller<T[]?> where TMarshaller : IMarshaller<T>
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, T[]? value)
    {
        if (value is null)
        {
            writer.WriteLength(WireFormat.NullLength);
            return;
        }
        writer.WriteLength(value.Length);
        foreach (T item in value)
        {
            TMarshaller.Write(ref writer, item);
        }
    }

    /// <inheritdoc/>
    public static T[]? Read(ref MarshalReader reader)
    {
        int length = reader.ReadLength();
        if (length == WireFormat.NullLength)
        {
            return null;
        }
        return WireCount.ReadArray<T, TMarshaller>(ref reader, length);
    }
}
