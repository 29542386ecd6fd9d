using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime.CompilerServices;
using XCall.Runtime;

namespace XCall.Domain;

/// <summary>
/// Hosts services from one assembly in their own collectible <see cref="System.Runtime.Loader.AssemblyLoadContext"/>
/// and hands out domain proxies to them. Calls copy their arguments (no mutable object crosses); disposing
/// the host closes every proxy it gave out and unloads the context.
/// </summary>
public sealed class DomainHost : IDisposable
{
    private static readonly Dictionary<string, DomainHost> s_byName = new(StringComparer.Ordinal);
    private readonly object _lock = new();
    private readonly List<DomainLink> _links = [];
    private DomainLoadContext? _context;
    private Assembly? _assembly;

    private DomainHost(DomainLoadContext context, Assembly assembly, string name)
    {
        _context = context;
        _assembly = assembly;
        Name = name;
    }

    /// <summary>The host's name: its proxies' address is <c>domain://name</c>.</summary>
    public string Name { get; }

    /// <summary>Loads <paramref name="assemblyPath"/> into a new collectible load context.</summary>
    [RequiresUnreferencedCode("Loads an assembly and finds the service type by reflection.")]
    public static DomainHost Load(string assemblyPath, string? name = null)
    {
        string full = Path.GetFullPath(assemblyPath);
        name ??= Path.GetFileNameWithoutExtension(full);
        lock (s_byName)
        {
            if (s_byName.ContainsKey(name))
            {
                throw new InvalidOperationException($"A domain host named '{name}' is already loaded; dispose it or choose another name.");
            }
            var context = new DomainLoadContext(name, full);
            Assembly assembly = context.LoadFromAssemblyPath(full);
            var host = new DomainHost(context, assembly, name);
            s_byName.Add(name, host);
            return host;
        }
    }

    /// <summary>The loaded host named <paramref name="name"/> (the <c>domain://name</c> address), or null.</summary>
    public static DomainHost? Find(string name)
    {
        lock (s_byName)
        {
            return s_byName.GetValueOrDefault(name);
        }
    }

    /// <summary>
    /// Creates the service in the host's context and returns a domain proxy to it. The service type is
    /// <paramref name="implementationTypeName"/>, or else the one public class of the assembly that implements
    /// <typeparamref name="T"/>; it needs a public parameterless constructor.
    /// </summary>
    [RequiresUnreferencedCode("Finds and creates the service type by reflection.")]
    [MethodImpl(MethodImplOptions.NoInlining)]
    public T Create<T>(string? implementationTypeName = null) where T : class
    {
        Assembly assembly = _assembly ?? throw new ObjectDisposedException(nameof(DomainHost));
        Type type = implementationTypeName is not null
            ? assembly.GetType(implementationTypeName, throwOnError: true)!
            : FindImplementation<T>(assembly);
        object target = Activator.CreateInstance(type)
            ?? throw new InvalidOperationException($"Could not create {type.FullName}.");
        return Attach<T>(target);
    }

    /// <summary>Returns a domain proxy for an object that already lives in the host's context.</summary>
    public T Attach<T>(object target) where T : class
    {
        if (target is not T)
        {
            throw new ArgumentException($"{target.GetType().FullName} does not implement {typeof(T).FullName}.", nameof(target));
        }
        var link = new DomainLink(target, $"domain://{Name}");
        lock (_lock)
        {
            ObjectDisposedException.ThrowIf(_context is null, this);
            _links.Add(link);
        }
        return ContractRegistry.Get<T>().CreateDomainProxy(link);
    }

    /// <summary>
    /// A domain proxy for <paramref name="target"/> without a load context of its own (for a service in
    /// the caller's context): same copying rules, nothing to unload.
    /// </summary>
    public static T Local<T>(T target, string name = "local") where T : class =>
        ContractRegistry.Get<T>().CreateDomainProxy(new DomainLink(target, $"domain://{name}"));

    /// <summary>A weak reference to the load context, to observe that it unloaded after <see cref="Dispose"/>.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public WeakReference ContextReference() => new(_context ?? throw new ObjectDisposedException(nameof(DomainHost)));

    /// <summary>Closes every proxy handed out and unloads the context once nothing references it.</summary>
    public void Dispose()
    {
        DomainLoadContext? context;
        DomainLink[] links;
        lock (_lock)
        {
            context = _context;
            _context = null;
            _assembly = null;
            links = [.. _links];
            _links.Clear();
        }
        lock (s_byName)
        {
            if (s_byName.TryGetValue(Name, out DomainHost? registered) && ReferenceEquals(registered, this))
            {
                s_byName.Remove(Name);
            }
        }
        foreach (DomainLink link in links)
        {
            link.Close();
        }
        context?.Unload();
    }

    [RequiresUnreferencedCode("Scans the assembly's types.")]
    private static Type FindImplementation<T>(Assembly assembly)
    {
        Type[] candidates = [.. assembly.GetExportedTypes().Where(t => t.IsClass && !t.IsAbstract && typeof(T).IsAssignableFrom(t))];
        return candidates.Length switch
        {
            1 => candidates[0],
            0 => throw new InvalidOperationException($"{assembly.GetName().Name} has no public class implementing {typeof(T).FullName}."),
            _ => throw new InvalidOperationException($"{assembly.GetName().Name} has several classes implementing {typeof(T).FullName}; name one."),
        };
    }
}
