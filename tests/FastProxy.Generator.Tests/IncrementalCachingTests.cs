using System.Collections;
using System.Reflection;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using XCall.Generator.Tests.Support;

namespace XCall.Generator.Tests;

/// <summary>Edits that do not touch a contract must not re-run its emission; the models must cache by value.</summary>
public sealed class IncrementalCachingTests
{
    private const string UnrelatedPath = "Unrelated.cs";
    private const string Unrelated = """
        namespace Other;

        public static class Clock
        {
            public static int Now() => 1;
        }
        """;

    private static readonly string[] s_steps = [ProxyGenerator.Steps.Parse, ProxyGenerator.Steps.Contracts, ProxyGenerator.Steps.DataTypes];

    private static readonly Type[] s_roslynTypes = [typeof(ISymbol), typeof(Compilation), typeof(SemanticModel), typeof(SyntaxNode), typeof(SyntaxTree), typeof(Location)];

    [Fact]
    public void Adding_an_unrelated_file_leaves_every_step_cached()
    {
        CSharpCompilation first = GeneratorHarness.CreateCompilation(ContractSources.Shapes);
        GeneratorDriver driver = GeneratorHarness.CreateDriver(trackSteps: true).RunGenerators(first);

        GeneratorRunResult second = Rerun(driver, first.AddSyntaxTrees(GeneratorHarness.Parse(UnrelatedPath, Unrelated)));

        AssertReasons(second, s_steps, IncrementalStepRunReason.Cached, IncrementalStepRunReason.Unchanged);
    }

    [Fact]
    public void Editing_a_method_body_in_another_file_leaves_every_step_cached()
    {
        CSharpCompilation first = GeneratorHarness.CreateCompilation((GeneratorHarness.ContractPath, ContractSources.Shapes), (UnrelatedPath, Unrelated));
        GeneratorDriver driver = GeneratorHarness.CreateDriver(trackSteps: true).RunGenerators(first);

        GeneratorRunResult second = Rerun(driver, ReplaceFile(first, UnrelatedPath, Unrelated.Replace("=> 1;", "=> 2;", StringComparison.Ordinal)));

        AssertReasons(second, s_steps, IncrementalStepRunReason.Cached, IncrementalStepRunReason.Unchanged);
    }

    [Fact]
    public void Adding_a_method_to_the_interface_modifies_the_contract_but_not_the_data_types()
    {
        CSharpCompilation first = GeneratorHarness.CreateCompilation(ContractSources.Shapes);
        GeneratorDriver driver = GeneratorHarness.CreateDriver(trackSteps: true).RunGenerators(first);
        string edited = ContractSources.Shapes.Replace("void Ping();", "void Ping();\n    void Reset();", StringComparison.Ordinal);

        GeneratorRunResult second = Rerun(driver, ReplaceFile(first, GeneratorHarness.ContractPath, edited));

        AssertSomeOutput(second, ProxyGenerator.Steps.Parse, IncrementalStepRunReason.Modified);
        AssertSomeOutput(second, ProxyGenerator.Steps.Contracts, IncrementalStepRunReason.Modified);
        AssertReasons(second, [ProxyGenerator.Steps.DataTypes], IncrementalStepRunReason.Cached, IncrementalStepRunReason.Unchanged);
    }

    [Fact]
    public void Changing_a_data_type_modifies_its_marshaller_and_the_contract_hash()
    {
        CSharpCompilation first = GeneratorHarness.CreateCompilation(ContractSources.Shapes);
        GeneratorDriver driver = GeneratorHarness.CreateDriver(trackSteps: true).RunGenerators(first);
        string edited = ContractSources.Shapes.Replace("public int p;", "public long p;", StringComparison.Ordinal);

        GeneratorRunResult second = Rerun(driver, ReplaceFile(first, GeneratorHarness.ContractPath, edited));

        AssertSomeOutput(second, ProxyGenerator.Steps.Contracts, IncrementalStepRunReason.Modified);
        (object Value, IncrementalStepRunReason Reason)[] dataTypes = Outputs(second, ProxyGenerator.Steps.DataTypes);
        Assert.Equal(
            ["global::Sample.Data:Modified", "global::Sample.Point:Unchanged"],
            dataTypes.Select(o => $"{((Model.DataTypeSpec)o.Value).FullName}:{o.Reason}").Order(StringComparer.Ordinal));
    }

    [Fact]
    public void Step_outputs_hold_no_roslyn_objects()
    {
        GeneratorRunResult result = GeneratorHarness.CreateDriver(trackSteps: true)
            .RunGenerators(GeneratorHarness.CreateCompilation(ContractSources.DataTypes))
            .GetRunResult().Results.Single();

        foreach (string step in s_steps)
        {
            (object Value, IncrementalStepRunReason Reason)[] outputs = Outputs(result, step);
            Assert.NotEmpty(outputs);
            for (int i = 0; i < outputs.Length; i++)
            {
                AssertHoldsNoRoslynObjects(outputs[i].Value, $"{step}[{i}]");
            }
        }
    }

    [Fact]
    public void Model_types_declare_no_roslyn_fields()
    {
        // Complements the walk above: it also covers members that happen to be null in the samples.
        Type[] models = [.. typeof(ProxyGenerator).Assembly.GetTypes().Where(t => t.Namespace == "XCall.Generator.Model"), typeof(ProxyGenerator.ParseResult)];
        Assert.Contains(typeof(Model.ContractSpec), models);

        foreach (Type model in models)
        {
            foreach (FieldInfo field in model.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic))
            {
                Assert.False(MentionsRoslynType(field.FieldType), $"{model.Name}.{field.Name} is a {field.FieldType}");
            }
        }
    }

    private static GeneratorRunResult Rerun(GeneratorDriver driver, Compilation compilation) =>
        driver.RunGenerators(compilation).GetRunResult().Results.Single();

    private static CSharpCompilation ReplaceFile(CSharpCompilation compilation, string path, string text) =>
        compilation.ReplaceSyntaxTree(compilation.SyntaxTrees.Single(t => t.FilePath == path), GeneratorHarness.Parse(path, text));

    private static (object Value, IncrementalStepRunReason Reason)[] Outputs(GeneratorRunResult result, string step)
    {
        Assert.True(result.TrackedSteps.ContainsKey(step), $"Step '{step}' was not tracked.");
        return [.. result.TrackedSteps[step].SelectMany(s => s.Outputs)];
    }

    private static void AssertReasons(GeneratorRunResult result, string[] steps, params IncrementalStepRunReason[] allowed)
    {
        foreach (string step in steps)
        {
            (object Value, IncrementalStepRunReason Reason)[] outputs = Outputs(result, step);
            Assert.NotEmpty(outputs);
            Assert.All(outputs, o => Assert.True(allowed.Contains(o.Reason), $"Step '{step}' output {o.Value} was {o.Reason}."));
        }
    }

    private static void AssertSomeOutput(GeneratorRunResult result, string step, IncrementalStepRunReason reason) =>
        Assert.Contains(Outputs(result, step), o => o.Reason == reason);

    private static void AssertHoldsNoRoslynObjects(object? value, string path)
    {
        if (value is null or string || value.GetType().IsPrimitive || value.GetType().IsEnum)
        {
            return;
        }
        Assert.False(s_roslynTypes.Any(t => t.IsInstanceOfType(value)), $"{path} holds a {value.GetType()}.");
        if (value is IEnumerable items)
        {
            int i = 0;
            foreach (object? item in items)
            {
                AssertHoldsNoRoslynObjects(item, $"{path}[{i++}]");
            }
            return;
        }
        foreach (PropertyInfo property in value.GetType().GetProperties(BindingFlags.Instance | BindingFlags.Public))
        {
            if (property.GetIndexParameters().Length == 0)
            {
                AssertHoldsNoRoslynObjects(property.GetValue(value), $"{path}.{property.Name}");
            }
        }
    }

    private static bool MentionsRoslynType(Type type) =>
        s_roslynTypes.Any(t => t.IsAssignableFrom(type))
        || (type.IsArray && MentionsRoslynType(type.GetElementType()!))
        || type.GetGenericArguments().Any(MentionsRoslynType);
}
