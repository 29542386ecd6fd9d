namespace XCall.Marshal;

/// <summary><see cref="ReadOnlyMemory{T}"/> of unmanaged values: count and one block copy; arrives array-backed.</summary>
public abstract class UnmanagedMemoryMarshaller<T> : IMarshaller<ReadOnlyMemory<T>> where T : unmanaged
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, ReadOnlyMemory<T> value) => writer.WriteSpan(value.Span);

    /// <inheritdoc/>
    public static ReadOnlyMemory<T> Read(ref MarshalReader reader) => reader.ReadArray<T>() ?? [];
}
