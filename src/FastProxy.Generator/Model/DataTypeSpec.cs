namespace XCall.Generator.Model;

/// <summary>One member of a data type, written in declaration order.</summary>
/// <param name="Name">Member name.</param>
/// <param name="Type">How it is marshalled.</param>
/// <param name="ConstructorIndex">Position in the constructor used to create the type, or -1 when set by an initializer or assignment.</param>
/// <param name="FreshList">A <c>List&lt;T&gt;</c> member that every new object starts with as a new empty list nobody
/// else holds (an empty initializer, no constructor of its own): reading fills that list instead of allocating another.</param>
internal sealed record MemberSpec(string Name, TypeSpec Type, int ConstructorIndex, bool FreshList = false);

/// <summary>How a data type is written and created.</summary>
internal enum DataKind
{
    /// <summary>A struct: its members, inline, no identity.</summary>
    Struct,

    /// <summary>A class created empty and filled (parameterless constructor, settable members): body breadth-first.</summary>
    Mutable,

    /// <summary>A class built from its members (constructor, init-only or required members): body inline.</summary>
    Immutable,

    /// <summary>An abstract class or interface: only its known types travel.</summary>
    Abstract,
}

/// <summary>A concrete type listed with [XCallKnownType] on a data type.</summary>
internal sealed record KnownTypeSpec(ushort Id, string FullName, string Marshaller);

/// <summary>A class, struct, record or interface that travels by value, member by member.</summary>
/// <param name="IsLeaf">No member can hold a data class object, so a copy member by member is a deep copy.</param>
/// <param name="ComparesByValue">A record, or a class that overrides Equals or GetHashCode.</param>
/// <param name="IsFrozen">A class whose objects cannot change once built (read-only fields of unmanaged values and
/// strings only): a domain call hands the callee the caller's object instead of a copy.</param>
internal sealed record DataTypeSpec(
    string FullName,
    string Marshaller,
    DataKind Kind,
    int ConstructorParameterCount,
    EquatableArray<MemberSpec> Members,
    EquatableArray<KnownTypeSpec> KnownTypes,
    bool IsLeaf,
    bool ComparesByValue = false,
    bool IsFrozen = false)
{
    public bool IsValueType => Kind == DataKind.Struct;

    /// <summary>Whether a value of this type can hold data class objects.</summary>
    public bool HasObjects => Kind != DataKind.Struct || !IsLeaf;
}
