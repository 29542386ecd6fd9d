using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime.Loader;

namespace XCall.Domain;

/// <summary>
/// A collectible load context for one service assembly. The service assembly and its private
/// dependencies load here; an assembly the default context already holds (XCall itself, the contract
/// assemblies) is shared, so both sides see the same interface types.
/// </summary>
internal sealed class DomainLoadContext : AssemblyLoadContext
{
    private readonly AssemblyDependencyResolver _resolver;
    private readonly string _mainName;

    public DomainLoadContext(string name, string mainAssemblyPath) : base(name, isCollectible: true)
    {
        _resolver = new AssemblyDependencyResolver(mainAssemblyPath);
        _mainName = AssemblyName.GetAssemblyName(mainAssemblyPath).Name!;
    }

    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "Loading service assemblies is the purpose of a domain host, which is marked RequiresUnreferencedCode.")]
    protected override Assembly? Load(AssemblyName assemblyName)
    {
        if (assemblyName.Name != _mainName)
        {
            foreach (Assembly shared in Default.Assemblies)
            {
                if (AssemblyName.ReferenceMatchesDefinition(assemblyName, shared.GetName()))
                {
                    return null;
                }
            }
        }
        string? path = _resolver.ResolveAssemblyToPath(assemblyName);
        return path is null ? null : LoadFromAssemblyPath(path);
    }

    protected override IntPtr LoadUnmanagedDll(string unmanagedDllName)
    {
        string? path = _resolver.ResolveUnmanagedDllToPath(unmanagedDllName);
        return path is null ? IntPtr.Zero : LoadUnmanagedDllFromPath(path);
    }
}
