namespace XCall.Generator.Model;

/// <summary>How one type is written, read and copied in generated code.</summary>
internal enum WireKind
{
    /// <summary>Unmanaged: one block write / read.</summary>
    Unmanaged,

    /// <summary>string: length and UTF-16 units; immutable, so the domain proxy passes it as is.</summary>
    String,

    /// <summary>T[] of unmanaged T: count and one block copy.</summary>
    UnmanagedArray,

    /// <summary>List&lt;T&gt; of unmanaged T.</summary>
    UnmanagedList,

    /// <summary>ReadOnlyMemory&lt;T&gt; of unmanaged T.</summary>
    UnmanagedMemory,

    /// <summary>ReadOnlySpan&lt;T&gt; of unmanaged T (sync methods only).</summary>
    ReadOnlySpan,

    /// <summary>Span&lt;T&gt; of unmanaged T (sync methods only).</summary>
    Span,

    /// <summary>XCall.LentSpan&lt;T&gt; of unmanaged T: an input of sync methods only, read in place or lent (see MarshalWriter.WriteLent).</summary>
    Lent,

    /// <summary>Anything written through a marshaller type (collections, nullable structs, registered marshallers).</summary>
    Marshalled,

    /// <summary>Written through a marshaller, and immutable: the domain proxy passes it as is (ImmutableArray of unmanaged values).</summary>
    MarshalledImmutable,

    /// <summary>A data type with a generated marshaller (and a generated copy for domain calls).</summary>
    Data,

    /// <summary>A [Remotable] interface: travels by reference (an object id); across a load context it becomes a domain proxy (DomainLink.Wrap).</summary>
    ObjectReference,

    /// <summary>IAsyncEnumerable&lt;T&gt;: a stream, its producer exposed by reference and its items pulled in batches;
    /// across a load context a wrapper that copies each item (DomainStreams.Copy).</summary>
    Stream,
}

/// <summary>A type as the emitter needs it.</summary>
/// <param name="FullName">Fully qualified name with nullable annotation, as it appears in signatures.</param>
/// <param name="ElementName">For arrays, lists, memory and spans of unmanaged values: the element type.</param>
/// <param name="Marshaller">The marshaller type (always set; used for <see cref="WireKind.Marshalled"/> and domain copies).</param>
/// <param name="HasObjects">Whether a value can hold objects that keep their identity within a message: data class objects, [Remotable] references or streams.</param>
/// <param name="Element">For a <see cref="WireKind.Stream"/>: how its items travel.</param>
internal sealed record TypeSpec(string FullName, WireKind Kind, string? ElementName, string Marshaller, bool HasObjects = false, TypeSpec? Element = null);
