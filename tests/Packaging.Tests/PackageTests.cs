using System.Diagnostics;
using System.IO.Compression;
using System.Text.RegularExpressions;
using System.Xml.Linq;

namespace XCall.Packaging.Tests;

/// <summary>
/// XCall as a new user gets it: the src libraries packed into a folder feed, and the README's quick start built and
/// run in a fresh project outside the repository that has nothing but a package reference to XCall.
/// </summary>
public sealed partial class PackageTests(ITestOutputHelper output)
{
    private static readonly string s_root = ChildProcess.RepositoryRoot;
    private static readonly TimeSpan s_processTimeout = ChildProcess.Timeout;

    [Fact]
    public void The_readme_quick_start_builds_and_runs_from_the_packages_alone()
    {
        string work = Directory.CreateTempSubdirectory("xcall-packages-").FullName;
        try
        {
            string feed = Path.Combine(work, "feed");
            string version = PackAll(feed);
            AssertPackagesAreComplete(feed, version);

            string app = Path.Combine(work, "calc");
            WriteFreshProject(app, feed, version, ReadmeCSharpBlocks());
            ChildProcess.Run(output, "dotnet", ["build", "-c", "Release", "-o", Path.Combine(app, "out")], app);
            string dll = Path.Combine(app, "out", "calc.dll");

            using Process server = ChildProcess.Start("dotnet", [dll, "serve"], app);
            string? ready = server.StandardOutput.ReadLine();
            Assert.Equal("serving shm://calc; Enter stops", ready);
            string client = ChildProcess.Run(output, "dotnet", [dll], app);
            Assert.Equal(["5", "p = 7"], client.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
            server.StandardInput.WriteLine();
            string serverRest = server.StandardOutput.ReadToEnd();
            Assert.True(server.WaitForExit(s_processTimeout), "the quick start's server did not stop on Enter");
            Assert.Equal(0, server.ExitCode);
            Assert.Contains("log: done", serverRest, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }
    }

    /// <summary>Packs every src library (not the generator, which ships inside XCall.FastProxy); returns the version.</summary>
    private string PackAll(string feed)
    {
        string[] projects = [.. Directory.GetFiles(Path.Combine(s_root, "src"), "*.csproj", SearchOption.AllDirectories)
            .Where(p => !File.ReadAllText(p).Contains("<IsRoslynComponent>true</IsRoslynComponent>", StringComparison.Ordinal))];
        string solution = Path.Combine(Path.GetDirectoryName(feed)!, "src.slnx");
        File.WriteAllText(solution, "<Solution>\n" + string.Concat(projects.Select(p => $"  <Project Path=\"{p}\" />\n")) + "</Solution>\n");
        ChildProcess.Run(output, "dotnet", ["pack", solution, "-c", ChildProcess.Metadata("Configuration"), "--no-build", "-o", feed], s_root);
        Match xcall = Assert.Single(Directory.GetFiles(feed, "XCall.*.nupkg").Select(f => PackageFileName().Match(Path.GetFileName(f))), m => m.Success);
        Assert.Equal(projects.Length, Directory.GetFiles(feed, "*.nupkg").Length);
        return xcall.Groups[1].Value;
    }

    private static void AssertPackagesAreComplete(string feed, string version)
    {
        foreach (string package in Directory.GetFiles(feed, "*.nupkg"))
        {
            string id = Path.GetFileName(package)[..^$".{version}.nupkg".Length];
            using ZipArchive zip = ZipFile.OpenRead(package);
            string[] entries = [.. zip.Entries.Select(e => e.FullName)];
            Assert.Contains("README.md", entries);
            Assert.Contains($"lib/net10.0/{id}.dll", entries);
            Assert.Contains($"lib/net10.0/{id}.xml", entries); // XML docs
            Assert.True(File.Exists(Path.ChangeExtension(package, ".snupkg")), $"{id} has no symbol package");
            XElement metadata = XDocument.Load(zip.GetEntry($"{id}.nuspec")!.Open()).Root!.Elements().Single(e => e.Name.LocalName == "metadata");
            XElement repository = metadata.Elements().Single(e => e.Name.LocalName == "repository");
            Assert.Matches("^[0-9a-f]{40}$", repository.Attribute("commit")?.Value ?? ""); // SourceLink's commit
            Assert.False(string.IsNullOrWhiteSpace(metadata.Elements().Single(e => e.Name.LocalName == "description").Value));
            if (id == "XCall.FastProxy")
            {
                Assert.Contains("analyzers/dotnet/cs/XCall.FastProxy.Generator.dll", entries);
            }
            else
            {
                Assert.DoesNotContain(entries, e => e.StartsWith("analyzers/", StringComparison.Ordinal));
            }
        }
    }

    /// <summary>The ```csharp blocks of the README's "Quick start" section, in order.</summary>
    private static string[] ReadmeCSharpBlocks()
    {
        string readme = File.ReadAllText(Path.Combine(s_root, "README.md"));
        int start = readme.IndexOf("## Quick start", StringComparison.Ordinal);
        Assert.True(start >= 0, "README.md has no '## Quick start' section");
        int end = readme.IndexOf("\n## ", start + 1, StringComparison.Ordinal);
        string section = readme[start..(end < 0 ? readme.Length : end)];
        Assert.Contains("dotnet add package XCall", section, StringComparison.Ordinal);
        string[] blocks = [.. CSharpBlock().Matches(section).Select(m => m.Groups[1].Value)];
        Assert.True(blocks.Length >= 2, $"the quick start has {blocks.Length} C# block(s)");
        return blocks;
    }

    /// <summary>A console project outside the repository, restoring from the folder feed only (its own package cache).</summary>
    private static void WriteFreshProject(string directory, string feed, string version, string[] blocks)
    {
        Directory.CreateDirectory(directory);
        ChildProcess.WriteConsoleProject(Path.Combine(directory, "calc.csproj"), $"""<PackageReference Include="XCall" Version="{version}" />""");
        File.WriteAllText(Path.Combine(directory, "nuget.config"), $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <config>
                <add key="globalPackagesFolder" value="{Path.Combine(directory, "packages")}" />
              </config>
              <packageSources>
                <clear />
                <add key="xcall-feed" value="{feed}" />
              </packageSources>
            </configuration>
            """);
        File.WriteAllText(Path.Combine(directory, "Program.cs"), blocks[0]);
        for (int i = 1; i < blocks.Length; i++)
        {
            File.WriteAllText(Path.Combine(directory, $"Readme{i}.cs"), blocks[i]);
        }
    }

    [GeneratedRegex(@"^XCall\.(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)\.nupkg$")]
    private static partial Regex PackageFileName();

    [GeneratedRegex(@"```csharp\n(.*?)```", RegexOptions.Singleline)]
    private static partial Regex CSharpBlock();
}
