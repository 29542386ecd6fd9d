namespace XCall.Marshal;

/// <summary>An array of unmanaged values: count and one block copy.</summary>
public abstract class UnmanagedArrayMarshaller<T> : IMarshaller<T[]?> where T : unmanaged
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, T[]? value) => writer.WriteArray(value);

    /// <inheritdoc/>
    public static T[]? Read(ref MarshalReader reader) => reader.ReadArray<T>();
}
