using System.ComponentModel;
using XCall.Domain;
using XCall.Marshal;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>
/// Marshals an <see cref="IAsyncEnumerable{T}"/> as a stream (docs/remoting.md, "Streams"): the writer's connection
/// exposes a <see cref="StreamProducer{T, TItems}"/> for it by reference and writes its id; the reader gets an
/// enumerable that pulls the items in batches from that producer. Across a load context the enumerable is wrapped
/// instead, each item copied (<see cref="DomainStreams"/>).
/// </summary>
/// <typeparam name="T">The item type.</typeparam>
/// <typeparam name="TItems">How the items travel.</typeparam>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class AsyncStreamMarshaller<T, TItems> : IMarshaller<IAsyncEnumerable<T>?> where TItems : IStreamItems<T>
{
    static AsyncStreamMarshaller() => ContractRegistry.Register(new StreamContract<T, TItems>());

    /// <summary>Writes <paramref name="value"/> as a stream this side produces.</summary>
    public static void Write(ref MarshalWriter writer, IAsyncEnumerable<T>? value) => new StreamProducer<T, TItems>().Write(ref writer, value);

    /// <summary>Reads a stream written by <see cref="Write"/>: the items come from the writer's side.</summary>
    public static IAsyncEnumerable<T>? Read(ref MarshalReader reader)
    {
        byte tag = reader.Read<byte>();
        switch (tag)
        {
            case ObjectReferenceMarshaller<object>.NullTag:
                return null;
            case ObjectReferenceMarshaller<object>.WriterObjectTag when reader.Context is LinkScope scope:
                return new RemoteStream<T, TItems>(scope.Connection.ImportProxy<StreamProxy<T, TItems>>(reader.Read<ulong>(), scope.Link));
            case ObjectReferenceMarshaller<object>.WriterObjectTag when reader.Context is XCallConnection connection:
                return new RemoteStream<T, TItems>(connection.ImportProxy<StreamProxy<T, TItems>>(reader.Read<ulong>(), connection.Channel.LinkGeneration));
            case ObjectReferenceMarshaller<object>.PassThroughTag when reader.Context is DomainCopyScope scope:
                return DomainStreams.Copy(
                    scope.Take(reader.Read<int>()) as IAsyncEnumerable<T> ?? throw new XCallProtocolException($"A passed object is not an IAsyncEnumerable<{typeof(T).Name}>."),
                    scope.Link,
                    static (item, link) => TItems.CopyItem(item, link));
            default:
                throw new XCallProtocolException($"Invalid stream reference tag {tag}.");
        }
    }
}
