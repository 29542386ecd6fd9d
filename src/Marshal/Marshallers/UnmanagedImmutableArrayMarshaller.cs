using System.Collections.Immutable;
using System.Runtime.InteropServices;

namespace XCall.Marshal;

/// <summary>An <see cref="ImmutableArray{T}"/> of unmanaged values: count (-1 for a default array) and one block copy.</summary>
public abstract class UnmanagedImmutableArrayMarshaller<T> : IMarshaller<ImmutableArray<T>> where T : unmanaged
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, ImmutableArray<T> value)
    {
        if (value.IsDefault)
        {
            writer.WriteLength(WireFormat.NullLength);
            return;
        }
        writer.WriteSpan(value.AsSpan());
    }

    /// <inheritdoc/>
    public static ImmutableArray<T> Read(ref MarshalReader reader)
    {
        T[]? array = reader.ReadArray<T>();
        return array is null ? default : ImmutableCollectionsMarshal.AsImmutableArray(array);
    }
}
