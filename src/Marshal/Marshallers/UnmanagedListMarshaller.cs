namespace XCall.Marshal;

/// <summary>A list of unmanaged values: count and one block copy.</summary>
public abstract class UnmanagedListMarshaller<T> : IMarshaller<List<T>?> where T : unmanaged
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, List<T>? value) => writer.WriteList(value);

    /// <inheritdoc/>
    public static List<T>? Read(ref MarshalReader reader) => reader.ReadList<T>();
}
