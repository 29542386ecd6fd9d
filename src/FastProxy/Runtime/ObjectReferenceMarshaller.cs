using System.ComponentModel;
using XCall.Domain;
using XCall.Marshal;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>
/// Marshals a [Remotable] interface by reference (docs/remoting.md, "Object references"): the writer's
/// connection exposes the object under an object id and writes the id; the reader makes a proxy for
/// that id on the same connection, so calls on it travel back to the sender. A proxy that came from the
/// reader's side travels back as the reader's own object.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public static class ObjectReferenceMarshaller
{
    /// <summary>
    /// Writer context of a frame that goes nowhere (a reply dropped because its call came over a lost link):
    /// references are written as ids that name nothing, and nothing is exposed for them.
    /// </summary>
    public static object Nowhere { get; } = new();
}

/// <summary>Marshals one [Remotable] interface <typeparamref name="T"/> by reference (see <see cref="ObjectReferenceMarshaller"/>).</summary>
/// <typeparam name="T">The [Remotable] interface.</typeparam>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class ObjectReferenceMarshaller<T> : IMarshaller<T?> where T : class
{
    /// <summary>Null.</summary>
    internal const byte NullTag = 0;

    /// <summary>An object the writer exposes: int64 object id on the writer's side follows.</summary>
    internal const byte WriterObjectTag = 1;

    /// <summary>An object the reader exposed earlier (a proxy going home): int64 object id on the reader's side follows.</summary>
    internal const byte ReaderObjectTag = 2;

    /// <summary>Domain copies only (context a <see cref="DomainCopyScope"/>): an index into the copy's parked objects; the reader wraps the object in a domain proxy.</summary>
    internal const byte PassThroughTag = 3;

    /// <summary>Writes <paramref name="value"/> as a reference.</summary>
    public static void Write(ref MarshalWriter writer, T? value)
    {
        if (value is null)
        {
            writer.Write<byte>(NullTag);
            return;
        }
        if (ReferenceEquals(writer.Context, ObjectReferenceMarshaller.Nowhere))
        {
            writer.Write<byte>(WriterObjectTag);
            writer.Write(0UL);
            return;
        }
        if (writer.Context is DomainCopyScope scope)
        {
            writer.Write<byte>(PassThroughTag);
            writer.Write(scope.Park(value));
            return;
        }
        if (writer.Context is not XCallConnection connection)
        {
            throw new InvalidOperationException(
                $"A {typeof(T).FullName} travels by reference and needs a connection to travel on; it cannot be written into a standalone buffer.");
        }
        if (value is ProxyBase proxy && ReferenceEquals(proxy.Connection, connection))
        {
            if (proxy.Reference is { } reference && (reference.Released || reference.Link != connection.Channel.LinkGeneration))
            {
                // Its owner forgot it (released), or is not the peer this frame goes to (a lost link): the id
                // would name nothing, or another object, there.
                throw reference.Released ? XCallConnection.Released(proxy) : connection.ReferenceLost(proxy);
            }
            writer.Write<byte>(ReaderObjectTag);
            writer.Write(proxy.ObjectId);
            return;
        }
        writer.Write<byte>(WriterObjectTag);
        writer.Write(connection.ExportObject(value, ContractRegistry.Get<T>().Dispatcher));
    }

    /// <summary>Reads a reference written by <see cref="Write"/>.</summary>
    public static T? Read(ref MarshalReader reader)
    {
        byte tag = reader.Read<byte>();
        switch (tag)
        {
            case NullTag:
                return null;
            case WriterObjectTag when reader.Context is LinkScope scope:
                return scope.Connection.ImportProxy<T>(reader.Read<ulong>(), scope.Link);
            case WriterObjectTag when reader.Context is XCallConnection connection:
                return connection.ImportProxy<T>(reader.Read<ulong>(), connection.Channel.LinkGeneration);
            case ReaderObjectTag when reader.Context is LinkScope scope:
                return scope.Connection.FindExported(reader.Read<ulong>()) as T
                    ?? throw new XCallProtocolException($"An object sent back as {typeof(T).FullName} is not one.");
            case ReaderObjectTag when reader.Context is XCallConnection connection:
                return connection.FindExported(reader.Read<ulong>()) as T
                    ?? throw new XCallProtocolException($"An object sent back as {typeof(T).FullName} is not one.");
            case PassThroughTag when reader.Context is DomainCopyScope scope:
                return scope.Link.Wrap(scope.Take(reader.Read<int>()) as T
                    ?? throw new XCallProtocolException($"A passed object is not a {typeof(T).FullName}."));
            default:
                throw new XCallProtocolException($"Invalid object reference tag {tag}.");
        }
    }
}
