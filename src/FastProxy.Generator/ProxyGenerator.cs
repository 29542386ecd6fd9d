using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;
using XCall.Generator.Model;

namespace XCall.Generator;

/// <summary>
/// Emits, for every interface marked <c>[XCall.Remotable]</c>: a proxy that sends calls as frames, a
/// dispatcher that serves them, a domain proxy for calls into another load context, a contract that
/// registers them all, and a marshaller per data type its signatures use.
/// </summary>
[Generator(LanguageNames.CSharp)]
public sealed partial class ProxyGenerator : IIncrementalGenerator
{
    internal const string RemotableAttribute = "XCall.RemotableAttribute";
    internal const string KnownTypeAttribute = "XCall.XCallKnownTypeAttribute";
    internal const string MarshallerAttribute = "XCall.XCallMarshallerAttribute";
    internal const string AsyncEnumerableName = "System.Collections.Generic.IAsyncEnumerable<T>";

    /// <summary>How the items of a stream of <paramref name="element"/> travel: one block per batch when unmanaged.</summary>
    internal static string StreamItems(TypeSpec element) => element.Kind == WireKind.Unmanaged
        ? $"global::XCall.Runtime.CompilerServices.UnmanagedStreamItems<{element.FullName}>"
        : $"global::XCall.Runtime.CompilerServices.MarshalledStreamItems<{element.FullName}, {element.Marshaller}>";

    /// <summary>The marshaller of a stream of <paramref name="element"/>.</summary>
    internal static string StreamMarshaller(TypeSpec element) =>
        $"global::XCall.Runtime.AsyncStreamMarshaller<{element.FullName}, {StreamItems(element)}>";

    /// <summary>Tracking names of the pipeline steps, for the caching tests.</summary>
    internal static class Steps
    {
        public const string Parse = nameof(Parse);
        public const string Contracts = nameof(Contracts);
        public const string DataTypes = nameof(DataTypes);
    }

    /// <inheritdoc/>
    public void Initialize(IncrementalGeneratorInitializationContext context)
    {
        // [Remotable] binds to this declaration, not to XCall.FastProxy's obsolete one: a project without the
        // generator fails to build (XCALL100) instead of failing at run time (RemotableAttributeSuppressor).
        context.RegisterPostInitializationOutput(static pic => pic.AddSource("XCall.RemotableAttribute.g.cs", RemotableAttributeSource));

        IncrementalValuesProvider<ParseResult> parsed = context.SyntaxProvider
            .ForAttributeWithMetadataName(
                RemotableAttribute,
                static (node, _) => node is Microsoft.CodeAnalysis.CSharp.Syntax.InterfaceDeclarationSyntax,
                static (ctx, _) => new Parser().Parse((INamedTypeSymbol)ctx.TargetSymbol))
            .WithTrackingName(Steps.Parse);

        context.RegisterSourceOutput(parsed.SelectMany(static (r, _) => r.Diagnostics), static (spc, d) => spc.ReportDiagnostic(d.ToDiagnostic()));

        // Registrations are checked once per compilation, not once per contract that uses them.
        IncrementalValuesProvider<DiagnosticInfo> registrations = context.CompilationProvider
            .Select(static (c, _) => Parser.CheckRegistrations(c.Assembly))
            .SelectMany(static (d, _) => d);
        context.RegisterSourceOutput(registrations, static (spc, d) => spc.ReportDiagnostic(d.ToDiagnostic()));

        IncrementalValuesProvider<ContractSpec> contracts = parsed
            .Where(static r => r.Contract is not null)
            .Select(static (r, _) => r.Contract!)
            .WithTrackingName(Steps.Contracts);
        context.RegisterSourceOutput(contracts, static (spc, c) => spc.AddSource($"{c.Identifier}.XCall.g.cs", Emitter.EmitContract(c)));

        IncrementalValuesProvider<DataTypeSpec> dataTypes = parsed
            .Select(static (r, _) => r.DataTypes)
            .Collect()
            .SelectMany(static (all, _) => Distinct(all))
            .WithTrackingName(Steps.DataTypes);
        context.RegisterSourceOutput(dataTypes, static (spc, d) =>
            spc.AddSource($"{d.Marshaller.Substring("global::XCall.Generated.".Length)}.g.cs", Emitter.EmitDataType(d)));
    }

    private static IEnumerable<DataTypeSpec> Distinct(ImmutableArray<EquatableArray<DataTypeSpec>> all)
    {
        var seen = new HashSet<string>();
        foreach (DataTypeSpec d in all.SelectMany(a => a))
        {
            if (seen.Add(d.FullName))
            {
                yield return d;
            }
        }
    }
}
