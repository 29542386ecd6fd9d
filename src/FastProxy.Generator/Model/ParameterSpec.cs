namespace XCall.Generator.Model;

/// <summary>How a parameter is passed.</summary>
internal enum ParameterMode
{
    In,
    Ref,
    Out,
    ReadOnlyRef,
    CancellationToken,
}

/// <summary>One parameter of a remotable method.</summary>
internal sealed record ParameterSpec(string Name, TypeSpec? Type, ParameterMode Mode, string DeclaredType);
