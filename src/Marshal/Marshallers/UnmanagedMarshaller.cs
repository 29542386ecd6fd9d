namespace XCall.Marshal;

/// <summary>Any unmanaged type (primitives, enums, DateTime, Guid, decimal, user unmanaged structs) as its in-memory bytes.</summary>
public abstract class UnmanagedMarshaller<T> : IMarshaller<T> where T : unmanaged
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, T value) => writer.Write(value);

    /// <inheritdoc/>
    public static T Read(ref MarshalReader reader) => reader.Read<T>();
}
