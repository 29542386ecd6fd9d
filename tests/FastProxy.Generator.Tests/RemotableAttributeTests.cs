using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Diagnostics;
using XCall.Generator.Tests.Support;

namespace XCall.Generator.Tests;

/// <summary>
/// [Remotable] without the generator is a build error (XCALL100, XCall.FastProxy's obsolete attribute); with it,
/// the generator's own declaration is bound and its suppressor hides the compiler's CS0436 about the two.
/// </summary>
public sealed class RemotableAttributeTests
{
    [Fact]
    public void Remotable_without_the_generator_is_error_XCALL100_on_each_use()
    {
        CSharpCompilation compilation = GeneratorHarness.CreateCompilation(Source);

        Diagnostic[] errors = [.. compilation.GetDiagnostics().Where(d => d.Severity == DiagnosticSeverity.Error)];

        Assert.Equal(["XCALL100", "XCALL100"], errors.Select(d => d.Id));
        Assert.All(errors, e => Assert.Contains("needs XCall's source generator", e.GetMessage(), StringComparison.Ordinal));
        Assert.Equal([5, 11], errors.Select(e => e.Location.GetLineSpan().StartLinePosition.Line + 1).Order());
    }

    [Fact]
    public async Task With_the_generator_Remotable_binds_to_its_declaration_and_the_suppressor_hides_CS0436()
    {
        // As a project compiles it: CS0436 reported, not suppressed by the options.
        CSharpCompilation input = GeneratorHarness.CreateCompilation(Source);
        input = input.WithOptions(input.Options.WithSpecificDiagnosticOptions([new("CS1591", ReportDiagnostic.Suppress)]));
        GeneratorOutput output = GeneratorHarness.Run(input);
        Assert.Empty(output.Diagnostics);

        ImmutableArray<Diagnostic> compiler = output.Compilation.GetDiagnostics();
        Assert.DoesNotContain(compiler, d => d.Severity == DiagnosticSeverity.Error);
        Assert.Equal(["CS0436", "CS0436"], compiler.Where(d => d.Severity == DiagnosticSeverity.Warning).Select(d => d.Id));

        ImmutableArray<Diagnostic> withSuppressor = await output.Compilation
            .WithAnalyzers([new RemotableAttributeSuppressor()], new CompilationWithAnalyzersOptions(
                new AnalyzerOptions([]), onAnalyzerException: null, concurrentAnalysis: false, logAnalyzerExecutionTime: false, reportSuppressedDiagnostics: true))
            .GetAllDiagnosticsAsync();
        Diagnostic[] warnings = [.. withSuppressor.Where(d => d.Severity >= DiagnosticSeverity.Warning)];
        Assert.Equal(2, warnings.Length);
        Assert.All(warnings, w => Assert.True(w.IsSuppressed && w.Id == "CS0436", w.ToString()));

        // Both interfaces got their contracts, and the attribute its declaration.
        Assert.Equal(2, output.Result.GeneratedSources.Count(s => s.HintName.EndsWith(".XCall.g.cs", StringComparison.Ordinal)));
        Assert.Contains(output.Result.GeneratedSources, s => s.HintName == "XCall.RemotableAttribute.g.cs");
    }

    [Fact]
    public async Task The_suppressor_leaves_other_CS0436_conflicts_alone()
    {
        const string conflict = """
            namespace XCall
            {
                public sealed class XCallServer { }
            }

            public static class Use
            {
                public static object Make() => new XCall.XCallServer();
            }
            """;
        CSharpCompilation input = GeneratorHarness.CreateCompilation(conflict);
        input = input.WithOptions(input.Options.WithSpecificDiagnosticOptions([new("CS1591", ReportDiagnostic.Suppress)]));

        ImmutableArray<Diagnostic> withSuppressor = await input.WithAnalyzers([new RemotableAttributeSuppressor()]).GetAllDiagnosticsAsync();

        Assert.Equal(["CS0436"], withSuppressor.Where(d => d.Severity >= DiagnosticSeverity.Warning && !d.IsSuppressed).Select(d => d.Id));
    }

    private const string Source = """
        using XCall;

        namespace Sample;

        [Remotable]
        public interface IProbe
        {
            int Echo(int value);
        }

        [XCall.Remotable]
        public interface IQualified
        {
            void Ping();
        }
        """;
}
