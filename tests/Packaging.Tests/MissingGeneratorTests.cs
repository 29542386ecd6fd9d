namespace XCall.Packaging.Tests;

/// <summary>
/// A [Remotable] interface in a project that references XCall's sources by ProjectReference, where the generator
/// (an analyzer) does not flow: a build error (XCALL100) without the generator, a working contract with it.
/// </summary>
public sealed class MissingGeneratorTests(ITestOutputHelper output)
{
    private const string Program = """
        using XCall;

        Console.WriteLine(XCall.Runtime.ContractRegistry.Get<IProbe>().Name);

        [Remotable]
        public interface IProbe
        {
            int Echo(int value);
        }
        """;

    [Fact]
    public void Remotable_in_a_ProjectReference_consumer_without_the_generator_fails_the_build()
    {
        string work = Directory.CreateTempSubdirectory("xcall-nogenerator-").FullName;
        try
        {
            WriteProject(work, withGenerator: false);

            (int exitCode, string text, string errors) = ChildProcess.RunToEnd("dotnet", BuildArguments(work), work);

            output.WriteLine(ChildProcess.LastLines(text + errors, 20));
            Assert.NotEqual(0, exitCode);
            Assert.Contains("Program.cs(5,2): error XCALL100: 'RemotableAttribute' is obsolete: '[Remotable] needs XCall's source generator", text, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }
    }

    [Fact]
    public void Remotable_in_a_ProjectReference_consumer_with_the_generator_builds_warning_free_and_runs()
    {
        string work = Directory.CreateTempSubdirectory("xcall-generator-").FullName;
        try
        {
            WriteProject(work, withGenerator: true);

            ChildProcess.Run(output, "dotnet", BuildArguments(work), work);
            string run = ChildProcess.Run(output, "dotnet", [Path.Combine(work, "bin", ChildProcess.Metadata("Configuration"), "net10.0", "probe.dll")], work);

            Assert.Equal("IProbe", run.Trim());
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }
    }

    /// <summary>
    /// The src projects are built already (this test project references them): build the consumer alone, into its
    /// own bin/ (an -o would move the referenced projects' outputs too).
    /// </summary>
    private static string[] BuildArguments(string work) =>
        ["build", "-c", ChildProcess.Metadata("Configuration"), "-p:BuildProjectReferences=false", "-p:RestoreRecursive=false"];

    /// <summary>A console project outside the repository that references XCall's sources.</summary>
    private static void WriteProject(string directory, bool withGenerator)
    {
        string src = Path.Combine(ChildProcess.RepositoryRoot, "src");
        string generator = withGenerator
            ? $"""<ProjectReference Include="{src}/FastProxy.Generator/XCall.FastProxy.Generator.csproj" OutputItemType="Analyzer" ReferenceOutputAssembly="false" />"""
            : "";
        ChildProcess.WriteConsoleProject(Path.Combine(directory, "probe.csproj"), $"""<ProjectReference Include="{src}/XCall/XCall.csproj" />{generator}""");
        File.WriteAllText(Path.Combine(directory, "Program.cs"), Program);
    }
}
