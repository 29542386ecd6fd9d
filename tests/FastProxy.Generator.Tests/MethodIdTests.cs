using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using XCall.Generator.Model;
using XCall.Generator.Tests.Support;

namespace XCall.Generator.Tests;

/// <summary>Method ids and contract hashes are wire format: they must only change when the wire changes.</summary>
public sealed class MethodIdTests
{
    private const string Calculator = """
        using XCall;

        namespace Sample;

        public class Data
        {
            public int p;
        }

        [Remotable]
        public interface ICalculator
        {
            int Add(int a, int b);
            long Add(long a, long b);
            Data Increment(Data data);
        }
        """;

    [Fact]
    public void Method_id_is_fnv1a_32_of_the_canonical_signature()
    {
        MethodSpec add = Method(Parse(Calculator), "Add", "int");

        // Canonical form: name, wire parameter types (fully qualified, keywords for special types), return type.
        Assert.Equal("Add(int,int)->int", add.Signature);
        Assert.Equal(Fnv1a.Hash32("Add(int,int)->int"), add.Id);
        Assert.Equal(0xffd001a9u, add.Id);
    }

    [Fact]
    public void Method_id_is_what_the_generated_proxy_and_dispatcher_use()
    {
        string contract = GeneratorHarness.Run(Calculator).Result.GeneratedSources
            .Single(s => s.HintName == "Sample_ICalculator.XCall.g.cs").SourceText.ToString();

        Assert.Contains("var __call = BeginCall(0xffd001a9u);", contract);
        Assert.Contains("case 0xffd001a9u:", contract);
    }

    [Fact]
    public void Overloads_get_different_ids()
    {
        ContractSpec contract = Parse(Calculator);

        MethodSpec ints = Method(contract, "Add", "int");
        MethodSpec longs = Method(contract, "Add", "long");

        Assert.Equal("Add(long,long)->long", longs.Signature);
        Assert.NotEqual(ints.Id, longs.Id);
    }

    [Fact]
    public void Signature_ignores_cancellation_tokens_and_marks_ref_out_and_one_way()
    {
        ContractSpec contract = Parse("""
            using System.Threading;
            using XCall;

            namespace Sample;

            [Remotable]
            public interface IShapes
            {
                bool TryParse(string text, out int value, CancellationToken cancellationToken);
                void Swap(ref int a, ref int b);
                [OneWay] void Post(string message);
            }
            """);

        Assert.Equal(
            ["TryParse(string,out int)->bool", "Swap(ref int,ref int)->void", "Post(string)->void oneway"],
            contract.Methods.Select(m => m.Signature));
    }

    [Fact]
    public void Contract_hash_is_stable_when_a_parameter_is_renamed()
    {
        ContractSpec before = Parse(Calculator);
        ContractSpec after = Parse(Calculator.Replace("int Add(int a, int b);", "int Add(int left, int right);", StringComparison.Ordinal));

        Assert.Equal(before.Hash, after.Hash);
        Assert.Equal(Method(before, "Add", "int").Id, Method(after, "Add", "int").Id);
    }

    [Fact]
    public void Contract_hash_changes_when_a_method_is_added()
    {
        ContractSpec before = Parse(Calculator);
        ContractSpec after = Parse(Calculator.Replace("Data Increment(Data data);", "Data Increment(Data data);\n    void Reset();", StringComparison.Ordinal));

        Assert.Equal(before.Methods.Count + 1, after.Methods.Count);
        Assert.NotEqual(before.Hash, after.Hash);
    }

    [Fact]
    public void Contract_hash_changes_when_a_data_type_member_changes_type()
    {
        ContractSpec before = Parse(Calculator);
        ContractSpec after = Parse(Calculator.Replace("public int p;", "public long p;", StringComparison.Ordinal));

        Assert.Equal(Method(before, "Increment", "global::Sample.Data").Id, Method(after, "Increment", "global::Sample.Data").Id);
        Assert.NotEqual(before.Hash, after.Hash);
    }

    [Fact]
    public void Contract_hash_changes_when_a_data_type_member_is_added()
    {
        ContractSpec before = Parse(Calculator);
        ContractSpec after = Parse(Calculator.Replace("public int p;", "public int p;\n    public int q;", StringComparison.Ordinal));

        Assert.NotEqual(before.Hash, after.Hash);
    }

    [Fact]
    public void Contract_hash_changes_when_a_data_class_becomes_immutable()
    {
        // Same members, but the body now follows its tag inline instead of breadth-first: another wire format.
        ContractSpec before = Parse(Calculator);
        ContractSpec after = Parse(Calculator.Replace("public int p;", "public int p { get; init; }", StringComparison.Ordinal));

        Assert.NotEqual(before.Hash, after.Hash);
    }

    [Fact]
    public void Contract_hash_changes_when_a_known_type_id_changes()
    {
        const string Shapes = """
            using XCall;

            namespace Sample;

            [XCallKnownType(typeof(Circle), 1)]
            public abstract class Shape { public double X; }

            public sealed class Circle : Shape { public double R; }

            [Remotable]
            public interface IDraw
            {
                void Draw(Shape shape);
            }
            """;
        ContractSpec before = Parse(Shapes);
        ContractSpec after = Parse(Shapes.Replace("typeof(Circle), 1)", "typeof(Circle), 2)", StringComparison.Ordinal));

        Assert.NotEqual(before.Hash, after.Hash);
    }

    private static ContractSpec Parse(string source)
    {
        CSharpCompilation compilation = GeneratorHarness.CreateCompilationWithAttribute(source);
        Assert.Empty(compilation.GetDiagnostics().Where(d => d.Severity == DiagnosticSeverity.Error));
        INamedTypeSymbol contract = compilation.GetSymbolsWithName(n => n.StartsWith('I'), SymbolFilter.Type).OfType<INamedTypeSymbol>().Single();
        ProxyGenerator.ParseResult result = new ProxyGenerator.Parser().Parse(contract);
        Assert.Empty(result.Diagnostics);
        return result.Contract!;
    }

    private static MethodSpec Method(ContractSpec contract, string name, string firstParameterType) =>
        contract.Methods.Single(m => m.Name == name && m.Parameters[0].DeclaredType == firstParameterType);
}
