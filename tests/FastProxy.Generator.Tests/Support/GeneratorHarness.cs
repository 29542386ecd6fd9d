using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;

namespace XCall.Generator.Tests.Support;

/// <summary>Builds in-memory compilations that reference the XCall runtime and runs <see cref="ProxyGenerator"/> over them.</summary>
internal static class GeneratorHarness
{
    /// <summary>Path of the single source file of <see cref="CreateCompilation(string)"/>.</summary>
    public const string ContractPath = "Contract.cs";

    // Documentation comments are parsed so that a broken cref in generated code shows up as a warning.
    public static readonly CSharpParseOptions ParseOptions = new(LanguageVersion.Latest, DocumentationMode.Diagnose);

    private static readonly Lazy<ImmutableArray<MetadataReference>> s_references = new(LoadReferences);

    public static CSharpCompilation CreateCompilation(string source) => CreateCompilation((ContractPath, source));

    public static CSharpCompilation CreateCompilation(params (string Path, string Text)[] sources) => CSharpCompilation.Create(
        "XCall.Generator.TestInput",
        sources.Select(s => Parse(s.Path, s.Text)),
        s_references.Value,
        new CSharpCompilationOptions(
            OutputKind.DynamicallyLinkedLibrary,
            nullableContextOptions: NullableContextOptions.Enable,
            // Every warning wave, as a project targeting the latest framework gets.
            warningLevel: 9999,
            // Test inputs carry no documentation; generated code has to stand on its own. CS0436 on [Remotable] (the
            // generator's own XCall.RemotableAttribute beside the referenced one) is RemotableAttributeSuppressor's in
            // a build, which RemotableAttributeTests run; the driver here runs the generator alone.
            specificDiagnosticOptions: [new("CS1591", ReportDiagnostic.Suppress), new("CS0436", ReportDiagnostic.Suppress)]));

    /// <summary>A compilation of <paramref name="source"/> with the attribute the generator declares, without running it.</summary>
    public static CSharpCompilation CreateCompilationWithAttribute(string source) =>
        CreateCompilation(source).AddSyntaxTrees(Parse("XCall.RemotableAttribute.g.cs", ProxyGenerator.RemotableAttributeSource));

    public static SyntaxTree Parse(string path, string text) => CSharpSyntaxTree.ParseText(text, ParseOptions, path);

    public static GeneratorDriver CreateDriver(bool trackSteps = false) => CSharpGeneratorDriver.Create(
        [new ProxyGenerator().AsSourceGenerator()],
        parseOptions: ParseOptions,
        driverOptions: new GeneratorDriverOptions(IncrementalGeneratorOutputKind.None, trackIncrementalGeneratorSteps: trackSteps));

    /// <summary>Runs the generator once over <paramref name="compilation"/>.</summary>
    public static GeneratorOutput Run(Compilation compilation)
    {
        GeneratorDriver driver = CreateDriver().RunGeneratorsAndUpdateCompilation(compilation, out Compilation output, out ImmutableArray<Diagnostic> diagnostics);
        return new GeneratorOutput(driver.GetRunResult().Results.Single(), output, diagnostics);
    }

    public static GeneratorOutput Run(string source) => Run(CreateCompilation(source));

    private static ImmutableArray<MetadataReference> LoadReferences()
    {
        List<string> paths = ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!).Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries).ToList();
        paths.Add(typeof(XCallServer).Assembly.Location);
        paths.Add(typeof(XCall.Marshal.MarshalWriter).Assembly.Location);
        return
        [
            .. paths
                .Where(p => p.EndsWith(".dll", StringComparison.OrdinalIgnoreCase))
                .DistinctBy(Path.GetFileName, StringComparer.OrdinalIgnoreCase)
                .Select(p => (MetadataReference)MetadataReference.CreateFromFile(p)),
        ];
    }
}
