namespace XCall.Marshal;

/// <summary>A nullable struct that is not unmanaged (it holds references): presence byte, then the value through its marshaller.</summary>
public abstract class NullableValueMarshaller<T, TMarshaller> : IMarshaller<T?>
    where T : struct
    where TMarshaller : IMarshaller<T>
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, T? value)
    {
        writer.WritePresence(value.HasValue);
        if (value.HasValue)
        {
            TMarshaller.Write(ref writer, value.GetValueOrDefault());
        }
    }

    /// <inheritdoc/>
    public static T? Read(ref MarshalReader reader) => reader.ReadPresence() ? TMarshaller.Read(ref reader) : null;
}
