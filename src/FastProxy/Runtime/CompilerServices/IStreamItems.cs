using System.ComponentModel;
using XCall.Marshal;

namespace XCall.Runtime.CompilerServices;

/// <summary>
/// How the items of an <see cref="IAsyncEnumerable{T}"/> stream travel in batches (docs/remoting.md, "Streams"):
/// the generator picks <see cref="UnmanagedStreamItems{T}"/> for unmanaged items (one block copy per batch) and
/// <see cref="MarshalledStreamItems{T, TMarshaller}"/> for every other type.
/// </summary>
/// <typeparam name="T">The item type.</typeparam>
[EditorBrowsable(EditorBrowsableState.Never)]
public interface IStreamItems<T>
{
    /// <summary>The most items one batch holds under <paramref name="options"/> (at least 1).</summary>
    static abstract int BatchItems(ConnectionOptions options);

    /// <summary>Writes a batch: its count, then its items.</summary>
    static abstract void WriteBatch(ref MarshalWriter writer, ReadOnlySpan<T> items);

    /// <summary>
    /// Reads a batch written by <see cref="WriteBatch"/> into <paramref name="items"/> (from index 0) and returns
    /// its count; a count above <paramref name="items"/>' length is an <see cref="XCallProtocolException"/>.
    /// </summary>
    static abstract int ReadBatch(ref MarshalReader reader, T[] items);

    /// <summary>A copy of <paramref name="item"/> for the other side of a load context (the domain transport).</summary>
    static abstract T CopyItem(T item, Domain.DomainLink link);
}
