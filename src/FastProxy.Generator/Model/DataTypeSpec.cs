namespace XCall.Generator.Model;

/// <summary>One member of a data type, written in declaration order.</summary>
/// <param name="Name">Member name.</param>
/// <param name="Type">How it is marshalled.</param>
/// <param name="ConstructorIndex">Position in the constructor used to create the type, or -1 when set by an initializer.</param>
internal sealed record MemberSpec(string Name, TypeSpec Type, int ConstructorIndex);

/// <summary>A class, struct or record that travels by value, field by field.</summary>
internal sealed record DataTypeSpec(
    string FullName,
    string Marshaller,
    bool IsValueType,
    int ConstructorParameterCount,
    EquatableArray<MemberSpec> Members);
