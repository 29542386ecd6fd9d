using System.Diagnostics.CodeAnalysis;

namespace XCall.Cluster;

/// <summary>
/// Names the program's <see cref="IWorkerSetup"/>: <c>xcall worker --assembly program.dll</c> loads the program's
/// assembly, reads this attribute from it and creates the setup with its public parameterless constructor. The type
/// comes from the program's own metadata; nothing a worker receives over the wire names a type.
/// </summary>
[AttributeUsage(AttributeTargets.Assembly, AllowMultiple = false)]
public sealed class XCallWorkerAttribute : Attribute
{
    /// <summary>Names <paramref name="setup"/>, a class implementing <see cref="IWorkerSetup"/>.</summary>
    public XCallWorkerAttribute([DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicParameterlessConstructor)] Type setup) => Setup = setup;

    /// <summary>The setup type.</summary>
    [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicParameterlessConstructor)]
    public Type Setup { get; }
}
