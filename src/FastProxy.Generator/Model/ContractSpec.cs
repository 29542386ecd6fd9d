namespace XCall.Generator.Model;

/// <summary>One [Remotable] interface, ready to emit.</summary>
/// <param name="FullName">global:: qualified name.</param>
/// <param name="DisplayName">Name as users read it (namespace.type).</param>
/// <param name="Identifier">A valid identifier derived from the full name, prefix of generated type names.</param>
/// <param name="Hash">Contract hash: FNV-1a 64 of the name and every method signature.</param>
internal sealed record ContractSpec(
    string FullName,
    string DisplayName,
    string Identifier,
    ulong Hash,
    EquatableArray<MethodSpec> Methods);
