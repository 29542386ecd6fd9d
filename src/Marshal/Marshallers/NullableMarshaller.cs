namespace XCall.Marshal;

/// <summary>A nullable unmanaged value: presence byte, then the value.</summary>
public abstract class NullableMarshaller<T> : IMarshaller<T?> where T : unmanaged
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, T? value) => writer.WriteNullable(value);

    /// <inheritdoc/>
    public static T? Read(ref MarshalReader reader) => reader.ReadNullable<T>();
}
