namespace XCall;

/// <summary>
/// Marks an interface as an XCall contract: the generator emits a client proxy, a server dispatcher, a
/// domain (in-process) proxy and marshallers for the data types of its signatures.
/// </summary>
/// <remarks>
/// The generator declares its own <c>XCall.RemotableAttribute</c> in every compilation it runs in, and the
/// compiler binds <c>[Remotable]</c> to that one (its warning CS0436 about the two is suppressed by the
/// generator's suppressor). So this type is only ever bound where the generator is missing, and there its
/// <see cref="ObsoleteAttribute"/> makes <c>[Remotable]</c> a build error (XCALL100) instead of the run-time
/// "has no generated XCall contract" error: whichever way the project references XCall, package or
/// ProjectReference.
/// </remarks>
[AttributeUsage(AttributeTargets.Interface, Inherited = false)]
[Obsolete(MissingGeneratorMessage, error: true, DiagnosticId = "XCALL100")]
public sealed class RemotableAttribute : Attribute
{
    internal const string MissingGeneratorMessage =
        "[Remotable] needs XCall's source generator in the project that declares the interface: reference the XCall " +
        "package (it brings the generator), or, with a ProjectReference to XCall's sources, also add <ProjectReference " +
        "Include=\"…/src/FastProxy.Generator/XCall.FastProxy.Generator.csproj\" OutputItemType=\"Analyzer\" " +
        "ReferenceOutputAssembly=\"false\" />";
}
