namespace XCall;

/// <summary>
/// On a data class or an interface: lists one concrete type that may travel where this type is declared,
/// with a small id that identifies it on the wire (type names never travel). An abstract class or an
/// interface with known types can be a parameter, result or member type. An object whose runtime type is
/// not listed is refused when it is sent, naming the type.
/// </summary>
/// <example><code>
/// [XCallKnownType(typeof(Circle), 1)]
/// [XCallKnownType(typeof(Square), 2)]
/// public abstract class Shape { public double X; public double Y; }
/// </code></example>
[AttributeUsage(AttributeTargets.Class | AttributeTargets.Interface, AllowMultiple = true, Inherited = false)]
public sealed class XCallKnownTypeAttribute : Attribute
{
    /// <summary>Lists <paramref name="type"/> (a concrete class derived from, or implementing, the marked type) with id <paramref name="id"/>.</summary>
    /// <param name="type">The known type.</param>
    /// <param name="id">Its id on the wire, unique among the known types of the marked type. Changing it changes the contract.</param>
    public XCallKnownTypeAttribute(Type type, ushort id)
    {
        Type = type;
        Id = id;
    }

    /// <summary>The known type.</summary>
    public Type Type { get; }

    /// <summary>Its id on the wire.</summary>
    public ushort Id { get; }
}
