using System.Reflection;
using System.Runtime.CompilerServices;
using System.Text.RegularExpressions;
using System.Xml.Linq;

namespace XCall.Tests;

/// <summary>
/// The layering rules of docs/remoting.md "Layers", read from the projects under src/: every layer uses only the
/// public API of the layers below it, so no src assembly grants its internals to another src assembly, and
/// references point down the table below.
/// </summary>
public sealed partial class ArchitectureTests
{
    /// <summary>Each src assembly and the src assemblies it may reference. A new src project must be added here.</summary>
    private static readonly Dictionary<string, string[]> s_mayReference = new()
    {
        ["XCall.Marshal"] = [],
        ["XCall.Transport"] = ["XCall.Marshal"],
        ["XCall.Transport.Shm"] = ["XCall.Transport", "XCall.Marshal"],
        ["XCall.Transport.Tcp"] = ["XCall.Transport", "XCall.Marshal"],
        ["XCall.FastProxy"] = ["XCall.Transport", "XCall.Marshal", "XCall.FastProxy.Generator"],
        ["XCall.FastProxy.Generator"] = [],
        ["XCall"] = ["XCall.FastProxy", "XCall.Transport.Shm", "XCall.Transport.Tcp", "XCall.Transport", "XCall.Marshal"],
        ["XCall.Channels"] = [],
        ["XCall.Cluster"] = ["XCall", "XCall.FastProxy.Generator"],
        ["XCall.Channels.Distributed"] = ["XCall.Channels", "XCall.Cluster", "XCall", "XCall.FastProxy.Generator"],
        ["XCall.Parallel"] = ["XCall.Cluster", "XCall.FastProxy.Generator"],
        ["XCall.Communicator"] = ["XCall.Cluster", "XCall", "XCall.Transport.Shm", "XCall.FastProxy.Generator"],
        ["XCall.Streams"] = ["XCall"],
        ["XCall.AspNetCore"] = ["XCall.Streams"],
        ["XCall.Hosting"] = ["XCall"],
    };

    private static readonly string s_sourceRoot = typeof(ArchitectureTests).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "SourceRoot").Value!;

    private static readonly IReadOnlyList<SourceProject> s_projects = SourceProject.LoadAll(s_sourceRoot);

    [Fact]
    public void Every_src_project_is_in_the_layer_table()
    {
        Assert.True(s_projects.Count >= 7, $"found {s_projects.Count} projects under {s_sourceRoot}");
        Assert.All(s_projects, p => Assert.True(s_mayReference.ContainsKey(p.AssemblyName),
            $"{p.AssemblyName} ({p.Path}) is not in ArchitectureTests' layer table: add it with the assemblies it may reference"));
    }

    [Fact]
    public void No_src_assembly_grants_its_internals_to_another_src_assembly()
    {
        var names = s_projects.Select(p => p.AssemblyName).ToHashSet(StringComparer.Ordinal);
        var grants = s_projects
            .SelectMany(p => p.InternalsVisibleTo.Select(friend => (p.AssemblyName, friend)))
            .Where(g => names.Contains(g.friend))
            .Select(g => $"{g.AssemblyName} -> {g.friend}")
            .ToList();
        Assert.True(grants.Count == 0, "src assemblies grant internals to src assemblies: " + string.Join(", ", grants));
    }

    [Fact]
    public void The_loaded_src_assemblies_grant_internals_to_tests_and_the_bench_only()
    {
        var names = s_projects.Select(p => p.AssemblyName).ToHashSet(StringComparer.Ordinal);
        Assembly[] loaded =
        [
            typeof(Remote).Assembly, typeof(Runtime.XCallConnection).Assembly, typeof(Transport.FrameChannel).Assembly,
            typeof(Transport.Shm.ShmTransport).Assembly, typeof(Transport.Tcp.TcpTransport).Assembly, typeof(Marshal.MarshalWriter).Assembly,
        ];
        foreach (Assembly assembly in loaded)
        {
            Assert.Contains(assembly.GetName().Name!, names);
            foreach (InternalsVisibleToAttribute grant in assembly.GetCustomAttributes<InternalsVisibleToAttribute>())
            {
                Assert.False(names.Contains(grant.AssemblyName), $"{assembly.GetName().Name} grants its internals to {grant.AssemblyName}");
                Assert.True(grant.AssemblyName.EndsWith(".Tests", StringComparison.Ordinal) || grant.AssemblyName == "XCall.Bench",
                    $"{assembly.GetName().Name} grants its internals to {grant.AssemblyName}, which is neither a test assembly nor the benchmark");
            }
        }
    }

    [Fact]
    public void Src_projects_reference_only_the_layers_below_them()
    {
        foreach (SourceProject project in s_projects.Where(p => s_mayReference.ContainsKey(p.AssemblyName)))
        {
            string[] allowed = s_mayReference[project.AssemblyName];
            foreach (string reference in project.References)
            {
                Assert.True(allowed.Contains(reference), $"{project.AssemblyName} references {reference}, which is not below it (allowed: {string.Join(", ", allowed)})");
            }
        }
    }

    [Fact]
    public void The_transports_see_the_seam_and_not_the_call_runtime()
    {
        foreach (string transport in new[] { "XCall.Transport.Shm", "XCall.Transport.Tcp" })
        {
            SourceProject project = s_projects.Single(p => p.AssemblyName == transport);
            Assert.Contains("XCall.Transport", project.References);
            Assert.DoesNotContain("XCall.FastProxy", project.References);
        }
    }

    private sealed partial record SourceProject(string Path, string AssemblyName, string[] References, string[] InternalsVisibleTo)
    {
        public static IReadOnlyList<SourceProject> LoadAll(string sourceRoot) =>
            Directory.GetFiles(sourceRoot, "*.csproj", SearchOption.AllDirectories)
                .Where(p => !p.Contains($"{System.IO.Path.DirectorySeparatorChar}obj{System.IO.Path.DirectorySeparatorChar}", StringComparison.Ordinal))
                .Select(Load)
                .ToList();

        private static SourceProject Load(string path)
        {
            XDocument project = XDocument.Load(path);
            string assemblyName = project.Descendants("AssemblyName").Select(e => e.Value).SingleOrDefault()
                ?? System.IO.Path.GetFileNameWithoutExtension(path);
            string[] references = project.Descendants("ProjectReference")
                .Select(e => AssemblyNameOf(System.IO.Path.GetFullPath(System.IO.Path.Combine(System.IO.Path.GetDirectoryName(path)!, e.Attribute("Include")!.Value))))
                .ToArray();
            // Both ways of granting: the MSBuild item and the attribute in source.
            IEnumerable<string> fromItems = project.Descendants("InternalsVisibleTo").Select(e => e.Attribute("Include")!.Value);
            IEnumerable<string> fromSource = Directory.GetFiles(System.IO.Path.GetDirectoryName(path)!, "*.cs", SearchOption.AllDirectories)
                .Where(f => !f.Contains($"{System.IO.Path.DirectorySeparatorChar}obj{System.IO.Path.DirectorySeparatorChar}", StringComparison.Ordinal))
                .SelectMany(f => InternalsVisibleToInSource().Matches(File.ReadAllText(f)).Select(m => m.Groups[1].Value));
            return new SourceProject(path, assemblyName, references, [.. fromItems, .. fromSource]);
        }

        private static string AssemblyNameOf(string projectPath) =>
            XDocument.Load(projectPath).Descendants("AssemblyName").Select(e => e.Value).SingleOrDefault()
                ?? System.IO.Path.GetFileNameWithoutExtension(projectPath);

        [GeneratedRegex(@"InternalsVisibleTo\(\s*""([^"",]+)")]
        private static partial Regex InternalsVisibleToInSource();
    }
}
