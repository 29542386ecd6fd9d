namespace XCall.Marshal;

/// <summary>
/// How one class takes part in an object graph: the generator emits one per data class (and per abstract
/// class or interface with known types). <see cref="MarshalWriter.WriteReference"/> and
/// <see cref="MarshalReader.ReadReference{T}"/> use it to write the reference tag, to find the known
/// subtype of a runtime type or of a type id, and to write, create and read the object's body.
/// </summary>
public abstract class GraphType
{
    /// <summary>Describes <paramref name="type"/>, whose objects are created the way <paramref name="kind"/> says.</summary>
    protected GraphType(Type type, GraphTypeKind kind)
        : this(type, kind, comparesByValue: false)
    {
    }

    /// <summary>
    /// Describes <paramref name="type"/>; <paramref name="comparesByValue"/> says its equality and hash code
    /// follow its members (a record, or a class that overrides <c>Equals</c> / <c>GetHashCode</c>), so a
    /// cycle through such objects alone is refused (<see cref="MarshalReader.ReadReference{T}"/>).
    /// </summary>
    protected GraphType(Type type, GraphTypeKind kind, bool comparesByValue)
    {
        ArgumentNullException.ThrowIfNull(type);
        Type = type;
        Kind = kind;
        ComparesByValue = comparesByValue;
        _isMutable = kind == GraphTypeKind.Mutable;
        _isConcrete = kind != GraphTypeKind.Abstract;
    }

    /// <summary>Whether objects of <see cref="Type"/> are equal and hash by their members.</summary>
    public bool ComparesByValue { get; }

    /// <summary>The described class; objects of exactly this runtime type are written with the <see cref="WireFormat.NewObject"/> tag.</summary>
    public Type Type { get; }

    /// <summary>How objects of <see cref="Type"/> are created from the wire.</summary>
    public GraphTypeKind Kind { get; }

    // Read on every object written or read: fields, not virtual calls.
    internal readonly bool _isMutable;
    internal readonly bool _isConcrete;

    /// <summary>The known subtype whose exact runtime type is <paramref name="runtimeType"/>, and its type id; null when it is not listed.</summary>
    public virtual GraphType? GetKnownType(Type runtimeType, out ushort typeId)
    {
        typeId = 0;
        return null;
    }

    /// <summary>The known subtype with id <paramref name="typeId"/>; null when there is none.</summary>
    public virtual GraphType? GetKnownType(ushort typeId) => null;

    /// <summary>Writes the members of <paramref name="value"/> (an object of exactly <see cref="Type"/>).</summary>
    public virtual void WriteBody(ref MarshalWriter writer, object value) => throw NotConcrete();

    /// <summary>A new, empty object of a <see cref="GraphTypeKind.Mutable"/> type, filled later by <see cref="ReadBody"/>.</summary>
    public virtual object CreateEmpty() => throw NotConcrete();

    /// <summary>Reads the members of a <see cref="GraphTypeKind.Mutable"/> object into <paramref name="value"/>.</summary>
    public virtual void ReadBody(ref MarshalReader reader, object value) => throw NotConcrete();

    /// <summary>Reads the members of a <see cref="GraphTypeKind.Immutable"/> object and builds it.</summary>
    public virtual object ReadObject(ref MarshalReader reader) => throw NotConcrete();

    /// <inheritdoc/>
    public override string ToString() => $"{Type.FullName} ({Kind})";

    private NotSupportedException NotConcrete() => new($"{GetType().FullName} does not implement this operation for {Kind} type {Type.FullName}.");
}
