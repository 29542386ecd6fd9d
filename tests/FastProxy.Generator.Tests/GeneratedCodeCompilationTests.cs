using Microsoft.CodeAnalysis;
using XCall.Generator.Tests.Support;

namespace XCall.Generator.Tests;

public sealed class GeneratedCodeCompilationTests
{
    [Theory]
    [InlineData(nameof(ContractSources.Shapes))]
    [InlineData(nameof(ContractSources.DataTypes))]
    [InlineData(nameof(ContractSources.Inheritance))]
    [InlineData(nameof(ContractSources.Graphs))]
    [InlineData(nameof(ContractSources.References))]
    [InlineData(nameof(ContractSources.Streams))]
    public void Generated_code_compiles_without_errors_or_warnings(string name)
    {
        GeneratorOutput output = GeneratorHarness.Run(ContractSources.ByCase(name));

        Assert.Empty(output.Diagnostics);
        Assert.NotEmpty(output.Result.GeneratedSources);
        Assert.Empty(output.Compilation.GetDiagnostics().Where(d => d.Severity >= DiagnosticSeverity.Warning).Select(d => d.ToString()));
    }
}
