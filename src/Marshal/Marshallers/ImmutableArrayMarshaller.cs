using System.Collections.Immutable;
using System.Runtime.InteropServices;

namespace XCall.Marshal;

/// <summary>An <see cref="ImmutableArray{T}"/> of any supported type: count (-1 for a default array), then each element.</summary>
public abstract class ImmutableArrayMarshaller<T, TMarshaller> : IMarshaller<ImmutableArray<T>> where TMarshaller : IMarshaller<T>
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, ImmutableArray<T> value)
    {
        if (value.IsDefault)
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
    public static ImmutableArray<T> Read(ref MarshalReader reader)
    {
        int length = reader.ReadLength();
        if (length == WireFormat.NullLength)
        {
            return default;
        }
        T[] array = WireCount.ReadArray<T, TMarshaller>(ref reader, length);
        // The array is never seen by anyone else: wrap it without a copy.
        return ImmutableCollectionsMarshal.AsImmutableArray(array);
    }
}
