using System.Globalization;
using Microsoft.CodeAnalysis;
using XCall.Generator.Tests.Support;

namespace XCall.Generator.Tests;

/// <summary>Each XCALL diagnostic, triggered by the smallest contract that shows it.</summary>
public sealed class DiagnosticTests
{
    private const string Usings = """
        using System;
        using System.Threading;
        using System.Threading.Tasks;
        using XCall;

        namespace Sample;

        """;

    [Fact]
    public void Valid_contract_reports_no_diagnostics()
    {
        GeneratorOutput output = GeneratorHarness.Run(ContractSources.Shapes);

        Assert.Empty(output.Diagnostics);
    }

    [Fact]
    public void Generic_method_reports_XCALL001_on_the_method()
    {
        Reported report = Report("XCALL001", """
            [Remotable]
            public interface IConverter
            {
                T Convert<T>(T value);
            }
            """);

        Assert.Equal("Convert", report.LocatedText);
        Assert.Contains("'Convert'", report.Message);
        Assert.Contains("'Sample.IConverter'", report.Message);
        Assert.Contains("declare one method per concrete type", report.Message);
    }

    [Fact]
    public void Parameter_of_an_unmarshallable_type_reports_XCALL002_on_the_parameter()
    {
        Reported report = Report("XCALL002", """
            [Remotable]
            public interface IResources
            {
                void Release(IDisposable resource);
            }
            """);

        Assert.Equal("resource", report.LocatedText);
        Assert.Contains("Parameter 'resource' of 'Release'", report.Message);
        Assert.Contains("'System.IDisposable'", report.Message);
        Assert.Contains("pass a concrete data type", report.Message);
    }

    [Fact]
    public void Data_type_member_of_an_unmarshallable_type_reports_XCALL002_where_the_type_is_used()
    {
        Reported report = Report("XCALL002", """
            public class Envelope
            {
                public int Id;
                public object? Payload;
            }

            [Remotable]
            public interface IMail
            {
                void Send(Envelope envelope);
            }
            """);

        Assert.Equal("envelope", report.LocatedText);
        Assert.Contains("Member 'Payload' of 'Sample.Envelope'", report.Message);
        Assert.Contains("'object?'", report.Message);
        Assert.Contains("framework types other than primitives, strings and the supported collections", report.Message);
        Assert.Contains("[assembly: XCallMarshaller(typeof(T), typeof(TMarshaller))]", report.Message);
    }

    [Fact]
    public void Framework_type_parameter_reports_XCALL002_naming_the_registration_fix()
    {
        Reported report = Report("XCALL002", """
            [Remotable]
            public interface ILinks
            {
                void Open(Uri address);
            }
            """);

        Assert.Equal("address", report.LocatedText);
        Assert.Contains("'System.Uri'", report.Message);
        Assert.Contains("register a marshaller for it with [assembly: XCallMarshaller(typeof(T), typeof(TMarshaller))]", report.Message);
    }

    [Fact]
    public void Registered_marshaller_makes_a_framework_type_valid()
    {
        GeneratorOutput output = GeneratorHarness.Run("""
            using System;
            using XCall;
            using XCall.Marshal;

            [assembly: XCallMarshaller(typeof(Uri), typeof(Sample.UriMarshaller))]

            namespace Sample;

            public abstract class UriMarshaller : IMarshaller<Uri?>
            {
                public static void Write(ref MarshalWriter writer, Uri? value) => writer.WriteString(value?.OriginalString);
                public static Uri? Read(ref MarshalReader reader) => reader.ReadString() is { } s ? new Uri(s) : null;
            }

            public class Link
            {
                public Uri? Target;
                public Uri[] Mirrors = [];
            }

            [Remotable]
            public interface ILinks
            {
                Uri Open(Uri address, Link link);
            }
            """);

        Assert.Empty(output.Diagnostics);
        Assert.Empty(output.Compilation.GetDiagnostics().Where(d => d.Severity >= DiagnosticSeverity.Warning));
        string contract = output.Result.GeneratedSources.Single(s => s.HintName == "Sample_ILinks.XCall.g.cs").SourceText.ToString();
        Assert.Contains("global::XCall.Marshal.RegisteredMarshaller<global::System.Uri, global::Sample.UriMarshaller>.Write(ref __w, address);", contract);
        string link = output.Result.GeneratedSources.Single(s => s.HintName == "Sample_Link_XCallMarshaller.g.cs").SourceText.ToString();
        Assert.Contains("global::XCall.Marshal.ArrayMarshaller<global::System.Uri, global::XCall.Marshal.RegisteredMarshaller<global::System.Uri, global::Sample.UriMarshaller>>", link);
    }

    [Fact]
    public void Registered_class_that_is_not_a_marshaller_of_the_type_reports_XCALL013_on_the_attribute()
    {
        const string Source = """
            using System;
            using XCall;
            using XCall.Marshal;

            [assembly: XCallMarshaller(typeof(Uri), typeof(Sample.StringOnly))]

            namespace Sample;

            public abstract class StringOnly : IMarshaller<string?>
            {
                public static void Write(ref MarshalWriter writer, string? value) => writer.WriteString(value);
                public static string? Read(ref MarshalReader reader) => reader.ReadString();
            }

            [Remotable]
            public interface IPing
            {
                void Ping();
            }
            """;
        GeneratorOutput output = GeneratorHarness.Run(Source);

        Diagnostic diagnostic = Assert.Single(output.Diagnostics);
        Assert.Equal("XCALL013", diagnostic.Id);
        Assert.Equal(GeneratorHarness.ContractPath, diagnostic.Location.GetLineSpan().Path);
        Assert.Equal("XCallMarshaller(typeof(Uri), typeof(Sample.StringOnly))", Source.Substring(diagnostic.Location.SourceSpan.Start, diagnostic.Location.SourceSpan.Length));
        string message = diagnostic.GetMessage(CultureInfo.InvariantCulture);
        Assert.Contains("'Sample.StringOnly'", message);
        Assert.Contains("IMarshaller<System.Uri>", message);
    }

    [Fact]
    public void Abstract_parameter_without_known_types_reports_XCALL002_naming_XCallKnownType()
    {
        Reported report = Report("XCALL002", """
            public abstract class Shape
            {
                public double X;
            }

            [Remotable]
            public interface IDraw
            {
                void Draw(Shape shape);
            }
            """);

        Assert.Equal("shape", report.LocatedText);
        Assert.Contains("abstract types cannot be created from the wire", report.Message);
        Assert.Contains("[XCallKnownType(typeof(T), id)]", report.Message);
    }

    [Fact]
    public void Abstract_class_and_interface_with_known_types_are_valid_parameters()
    {
        GeneratorOutput output = GeneratorHarness.Run(Usings + """
            [XCallKnownType(typeof(Circle), 1)]
            public abstract class Shape
            {
                public double X;
            }

            [XCallKnownType(typeof(Circle), 1)]
            public interface IRound
            {
            }

            public sealed class Circle : Shape, IRound
            {
                public double Radius;
            }

            [Remotable]
            public interface IDraw
            {
                IRound Draw(Shape shape, IRound[] rounds);
            }
            """);

        Assert.Empty(output.Diagnostics);
        Assert.Empty(output.Compilation.GetDiagnostics().Where(d => d.Severity >= DiagnosticSeverity.Warning));
    }

    [Fact]
    public void Two_known_types_with_one_id_report_XCALL011_on_the_second_attribute()
    {
        Reported report = Report("XCALL011", """
            [XCallKnownType(typeof(Circle), 1)]
            [XCallKnownType(typeof(Square), 1)]
            public abstract class Shape
            {
            }

            public sealed class Circle : Shape
            {
            }

            public sealed class Square : Shape
            {
            }

            [Remotable]
            public interface IDraw
            {
                void Draw(Shape shape);
            }
            """);

        Assert.Equal("XCallKnownType(typeof(Square), 1)", report.LocatedText);
        Assert.Contains("'Sample.Shape'", report.Message);
        Assert.Contains("'Sample.Square'", report.Message);
        Assert.Contains("id 1 is already given to 'Sample.Circle'", report.Message);
    }

    [Fact]
    public void Known_type_listed_twice_reports_XCALL011()
    {
        Reported report = Report("XCALL011", """
            [XCallKnownType(typeof(Circle), 1)]
            [XCallKnownType(typeof(Circle), 2)]
            public abstract class Shape
            {
            }

            public sealed class Circle : Shape
            {
            }

            [Remotable]
            public interface IDraw
            {
                void Draw(Shape shape);
            }
            """);

        Assert.Equal("XCallKnownType(typeof(Circle), 2)", report.LocatedText);
        Assert.Contains("listed twice", report.Message);
    }

    [Theory]
    [InlineData("public sealed class Other { }", "Other")]
    [InlineData("public struct Other : IShape { }", "Other")]
    [InlineData("public abstract class Other : Shape { }", "Other")]
    public void Known_type_that_is_not_a_concrete_subclass_reports_XCALL012_on_the_attribute(string declaration, string name)
    {
        Reported report = Report("XCALL012", $$"""
            public interface IShape
            {
            }

            [XCallKnownType(typeof({{name}}), 1)]
            public abstract class Shape : IShape
            {
            }

            {{declaration}}

            [Remotable]
            public interface IDraw
            {
                void Draw(Shape shape);
            }
            """);

        Assert.Equal($"XCallKnownType(typeof({name}), 1)", report.LocatedText);
        Assert.Contains($"'Sample.{name}'", report.Message);
        Assert.Contains("is not a concrete class derived from it", report.Message);
    }

    [Fact]
    public void One_way_method_returning_a_value_reports_XCALL003_on_the_method()
    {
        Reported report = Report("XCALL003", """
            [Remotable]
            public interface ILog
            {
                [OneWay] int Post(string message);
            }
            """);

        Assert.Equal("Post", report.LocatedText);
        Assert.Contains("'Post'", report.Message);
        Assert.Contains("must return void", report.Message);
    }

    [Fact]
    public void Methods_whose_ids_collide_report_XCALL004_on_the_second_method()
    {
        // Found by search: FNV-1a 32 maps both signatures to 0x40cd79e5.
        Assert.Equal(Fnv1a.Hash32("M15119()->void"), Fnv1a.Hash32("M203802()->void"));

        Reported report = Report("XCALL004", """
            [Remotable]
            public interface ICollide
            {
                void M15119();
                void M203802();
            }
            """);

        Assert.Equal("M203802", report.LocatedText);
        Assert.Contains("'M15119()->void' and 'M203802()->void'", report.Message);
        Assert.Contains("'Sample.ICollide'", report.Message);
        Assert.Contains("0x40cd79e5", report.Message);
        Assert.Contains("rename one of them", report.Message);
    }

    [Fact]
    public void Out_parameter_on_an_async_method_reports_XCALL005_on_the_parameter()
    {
        Reported report = Report("XCALL005", """
            [Remotable]
            public interface IParser
            {
                Task<bool> TryParseAsync(string text, out int value);
            }
            """);

        Assert.Equal("value", report.LocatedText);
        Assert.Contains("'TryParseAsync'", report.Message);
        Assert.Contains("'value'", report.Message);
        Assert.Contains("return the values in the task's result", report.Message);
    }

    [Fact]
    public void Ref_parameter_on_a_method_returning_a_stream_reports_XCALL005_on_the_parameter()
    {
        Reported report = Report("XCALL005", """
            [Remotable]
            public interface IFeed
            {
                System.Collections.Generic.IAsyncEnumerable<int> Read(ref int cursor);
            }
            """);

        Assert.Equal("cursor", report.LocatedText);
        Assert.Contains("'Read'", report.Message);
    }

    [Fact]
    public void Stream_of_streams_reports_XCALL002_on_the_method()
    {
        Reported report = Report("XCALL002", """
            [Remotable]
            public interface IFeed
            {
                System.Collections.Generic.IAsyncEnumerable<System.Collections.Generic.IAsyncEnumerable<int>> Nested();
            }
            """);

        Assert.Equal("Nested", report.LocatedText);
        Assert.Contains("a stream of streams is not supported", report.Message);
    }

    [Fact]
    public void Stream_of_an_unmarshallable_type_reports_XCALL002_naming_the_item_type()
    {
        Reported report = Report("XCALL002", """
            [Remotable]
            public interface IFeed
            {
                System.Collections.Generic.IAsyncEnumerable<IDisposable> Handles();
            }
            """);

        Assert.Equal("Handles", report.LocatedText);
        Assert.Contains("pass a concrete data type", report.Message);
    }

    [Fact]
    public void Property_reports_XCALL006_on_the_property()
    {
        Reported report = Report("XCALL006", """
            [Remotable]
            public interface ICounter
            {
                int Count { get; }
            }
            """);

        Assert.Equal("Count", report.LocatedText);
        Assert.Contains("'Count'", report.Message);
        Assert.Contains("'Sample.ICounter'", report.Message);
        Assert.Contains("replace properties and events with methods", report.Message);
    }

    [Fact]
    public void Event_reports_XCALL006_once_on_the_event()
    {
        Reported report = Report("XCALL006", """
            [Remotable]
            public interface INotifier
            {
                event EventHandler Changed;
            }
            """);

        Assert.Equal("Changed", report.LocatedText);
        Assert.Contains("'Changed'", report.Message);
        Assert.Contains("'Sample.INotifier'", report.Message);
    }

    [Fact]
    public void Data_type_without_a_usable_constructor_reports_XCALL007_on_the_type()
    {
        Reported report = Report("XCALL007", """
            public class Handle
            {
                public Handle(int id)
                {
                }

                public int Value;
            }

            [Remotable]
            public interface IHandles
            {
                void Close(Handle handle);
            }
            """);

        Assert.Equal("Handle", report.LocatedText);
        Assert.Contains("'Sample.Handle'", report.Message);
        Assert.Contains("needs a public parameterless constructor", report.Message);
    }

    [Fact]
    public void Generic_interface_reports_XCALL008_on_the_interface()
    {
        Reported report = Report("XCALL008", """
            [Remotable]
            public interface IRepository<T>
            {
                T Get(int id);
            }
            """);

        Assert.Equal("IRepository", report.LocatedText);
        Assert.Contains("'Sample.IRepository<T>'", report.Message);
        Assert.Contains("declare a non-generic interface per type argument", report.Message);
    }

    [Fact]
    public void Span_parameter_on_an_async_method_reports_XCALL009_on_the_parameter()
    {
        Reported report = Report("XCALL009", """
            [Remotable]
            public interface ISummer
            {
                Task<int> SumAsync(ReadOnlySpan<int> values);
            }
            """);

        Assert.Equal("values", report.LocatedText);
        Assert.Contains("'SumAsync'", report.Message);
        Assert.Contains("'values'", report.Message);
        Assert.Contains("use ReadOnlyMemory<T> or an array", report.Message);
    }

    [Fact]
    public void Span_parameter_on_a_one_way_method_reports_XCALL009_on_the_parameter()
    {
        Reported report = Report("XCALL009", """
            [Remotable]
            public interface ISink
            {
                [OneWay] void Push(Span<byte> data);
            }
            """);

        Assert.Equal("data", report.LocatedText);
        Assert.Contains("'Push'", report.Message);
    }

    [Fact]
    public void Span_parameter_on_a_sync_method_warns_XCALL014_that_it_is_input_only()
    {
        Reported report = Report("XCALL014", """
            [Remotable]
            public interface IFiller
            {
                void Fill(Span<byte> buffer);
            }
            """, DiagnosticSeverity.Warning);

        Assert.Equal("buffer", report.LocatedText);
        Assert.Contains("'Fill'", report.Message);
        GeneratorOutput output = GeneratorHarness.Run(Usings + """
            [Remotable]
            public interface IFiller
            {
                void Fill(Span<byte> buffer);
            }
            """);
        Assert.Contains(output.Result.GeneratedSources, s => s.HintName == "Sample_IFiller.XCall.g.cs"); // a warning leaves the proxy made
        Assert.Contains("does not come back", report.Message);
        Assert.Contains("ReadOnlySpan<T>", report.Message);
    }

    [Theory]
    [InlineData("int Next(int after);", "Next")]
    [InlineData("[OneWay] void Poke(int value);", "Poke")]
    public void LongWait_on_a_method_that_is_not_awaited_warns_XCALL015_and_the_proxy_is_still_made(string method, string name)
    {
        Reported report = Report("XCALL015", $$"""
            [Remotable]
            public interface IEvents
            {
                [LongWait] {{method}}
            }
            """, DiagnosticSeverity.Warning);

        Assert.Contains("has no effect", report.Message);
        GeneratorOutput output = GeneratorHarness.Run(Usings + $$"""
            [Remotable]
            public interface IEvents
            {
                [LongWait] {{method}}
            }
            """);
        string contract = output.Result.GeneratedSources.Single(s => s.HintName == "Sample_IEvents.XCall.g.cs").SourceText.ToString();
        Assert.Contains($"IEvents.{name}(", contract);
        Assert.DoesNotContain("BeginLongWaitCall", contract);
    }

    [Fact]
    public void ReadOnlySpan_parameter_on_a_sync_method_reports_nothing()
    {
        GeneratorOutput output = GeneratorHarness.Run(Usings + """
            [Remotable]
            public interface ISummer
            {
                int Sum(ReadOnlySpan<int> values);
            }
            """);

        Assert.Empty(output.Diagnostics);
    }

    [Fact]
    public void LentSpan_parameter_on_an_async_method_reports_XCALL009_on_the_parameter()
    {
        Reported report = Report("XCALL009", """
            [Remotable]
            public interface IStore
            {
                Task PutAsync(LentSpan<byte> data);
            }
            """);

        Assert.Equal("data", report.LocatedText);
        Assert.Contains("'PutAsync'", report.Message);
    }

    [Theory]
    [InlineData("LentSpan<byte> Get();", "Return value")]
    [InlineData("void Get(ref LentSpan<byte> data);", "Parameter 'data'")]
    [InlineData("void Get(out LentSpan<byte> data);", "Parameter 'data'")]
    public void LentSpan_as_a_result_or_a_ref_or_out_parameter_reports_XCALL002_input_only(string method, string what)
    {
        Reported report = Report("XCALL002", $$"""
            [Remotable]
            public interface IStore
            {
                {{method}}
            }
            """);

        Assert.Contains(what, report.Message);
        Assert.Contains("caller to the callee only", report.Message);
    }

    [Fact]
    public void LentSpan_of_a_managed_element_type_reports_XCALL002()
    {
        Reported report = Report("XCALL002", """
            [Remotable]
            public interface IStore
            {
                void Put(LentSpan<string> data);
            }
            """);

        Assert.Contains("unmanaged element types", report.Message);
    }

    [Fact]
    public void LentSpan_parameter_on_a_sync_method_reports_nothing()
    {
        GeneratorOutput output = GeneratorHarness.Run(Usings + """
            [Remotable]
            public interface IStore
            {
                long Put(string key, LentSpan<byte> data, in LentSpan<int> index);
            }
            """);

        Assert.Empty(output.Diagnostics);
    }

    [Fact]
    public void Two_cancellation_tokens_report_XCALL010_on_the_method()
    {
        Reported report = Report("XCALL010", """
            [Remotable]
            public interface IWaiter
            {
                int Wait(CancellationToken first, CancellationToken second);
            }
            """);

        Assert.Equal("Wait", report.LocatedText);
        Assert.Contains("'Wait'", report.Message);
        Assert.Contains("keep one", report.Message);
    }

    [Fact]
    public void Invalid_contract_reports_only_the_generator_error()
    {
        // Emitting a contract without its invalid method would add compiler errors inside generated code.
        GeneratorOutput output = GeneratorHarness.Run(Usings + """
            [Remotable]
            public interface IMixed
            {
                int Add(int a, int b);
                T Convert<T>(T value);
            }
            """);

        Assert.Equal("XCALL001", Assert.Single(output.Diagnostics).Id);
        Assert.Equal(["XCALL001"], output.Compilation.GetDiagnostics().Concat(output.Diagnostics).Where(d => d.Severity == DiagnosticSeverity.Error).Select(d => d.Id));
    }

    /// <summary>Runs the generator over <paramref name="body"/> and expects exactly one error, <paramref name="id"/>.</summary>
    private static Reported Report(string id, string body, DiagnosticSeverity severity = DiagnosticSeverity.Error)
    {
        string source = Usings + body;
        GeneratorOutput output = GeneratorHarness.Run(source);

        Diagnostic diagnostic = Assert.Single(output.Diagnostics);
        Assert.Equal(id, diagnostic.Id);
        Assert.Equal(severity, diagnostic.Severity);
        FileLinePositionSpan line = diagnostic.Location.GetLineSpan();
        Assert.Equal(GeneratorHarness.ContractPath, line.Path);
        string located = source.Substring(diagnostic.Location.SourceSpan.Start, diagnostic.Location.SourceSpan.Length);
        // The line span must agree with the text span, or IDEs underline the wrong place.
        Assert.Equal(source.Split('\n')[line.StartLinePosition.Line].Substring(line.StartLinePosition.Character, located.Length), located);
        return new Reported(located, diagnostic.GetMessage(CultureInfo.InvariantCulture));
    }

    private sealed record Reported(string LocatedText, string Message);
}
