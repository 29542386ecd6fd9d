using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Diagnostics;

namespace XCall.Generator;

/// <summary>
/// Suppresses CS0436 on <c>[Remotable]</c>: the generator declares <c>XCall.RemotableAttribute</c> in the
/// compilation (<see cref="ProxyGenerator"/>'s post-initialization output), which the compiler prefers over
/// XCall.FastProxy's obsolete one, and the preference is the point: the referenced type is bound, and fails the
/// build with XCALL100, only where the generator does not run.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class RemotableAttributeSuppressor : DiagnosticSuppressor
{
    internal static readonly SuppressionDescriptor Conflict = new(
        "XCALLSPR001",
        "CS0436",
        "XCall's generator declares XCall.RemotableAttribute in the compilation on purpose: the referenced one marks a project without the generator");

    /// <inheritdoc/>
    public override ImmutableArray<SuppressionDescriptor> SupportedSuppressions { get; } = ImmutableArray.Create(Conflict);

    /// <inheritdoc/>
    public override void ReportSuppressions(SuppressionAnalysisContext context)
    {
        foreach (Diagnostic diagnostic in context.ReportedDiagnostics)
        {
            if (diagnostic.Location.SourceTree is not { } tree)
            {
                continue;
            }
            SyntaxNode node = tree.GetRoot(context.CancellationToken).FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true);
            SymbolInfo info = context.GetSemanticModel(tree).GetSymbolInfo(node is AttributeSyntax a ? a.Name : node, context.CancellationToken);
            ISymbol? symbol = info.Symbol is IMethodSymbol { MethodKind: MethodKind.Constructor } constructor ? constructor.ContainingType : info.Symbol;
            if (symbol is INamedTypeSymbol type && type.ToDisplayString() == ProxyGenerator.RemotableAttribute && type.Locations.Any(l => l.IsInSource))
            {
                context.ReportSuppression(Suppression.Create(Conflict, diagnostic));
            }
        }
    }
}
