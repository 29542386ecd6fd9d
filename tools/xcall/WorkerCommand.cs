using System.Globalization;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Runtime.Loader;
using XCall.Cluster;

namespace XCall.Cli;

/// <summary>
/// <c>xcall worker</c>: loads the program's assembly (its dependencies resolved through the program's deps.json,
/// XCall's own assemblies shared with this tool), runs the <see cref="IWorkerSetup"/> its
/// <see cref="XCallWorkerAttribute"/> names, and serves as a <see cref="WorkerHost"/> until it is ended.
/// </summary>
internal static class WorkerCommand
{
    /// <summary>Serves until <paramref name="cancellationToken"/> is cancelled; returns the exit code.</summary>
    public static async Task<int> RunAsync(WorkerSettings settings, TextWriter output, TextWriter error, CancellationToken cancellationToken)
    {
        IWorkerSetup? setup = LoadSetup(settings.Assembly, out Assembly? program, out string? why);
        if (setup is null)
        {
            error.WriteLine($"xcall worker: {why}");
            return 2;
        }
        await using ClusterWorld world = await ClusterWorld.JoinAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        var options = new WorkerHostOptions { Pool = settings.Pool, Slots = settings.Slots, Listen = settings.Listen };
        await using WorkerHost host = await WorkerHost.StartAsync(world, options, setup.ConfigureAsync, cancellationToken).ConfigureAwait(false);
        string listen = host.ListenAddress is { } address ? $", and at {address}" : "";
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"xcall worker: {host.Name} serves pool {host.Pool} with {host.Slots} slot(s) for {program!.GetName().Name} at {world.GetAddress(world.Rank)}{listen} (pid {Environment.ProcessId})"));
        output.Flush();
        try
        {
            await Task.Delay(Timeout.Infinite, cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // Ended by Ctrl+C or SIGTERM: leave the world and end.
        }
        return 0;
    }

    /// <summary>Loads the program at <paramref name="path"/> and creates the setup its attribute names; null and why when it cannot.</summary>
    internal static IWorkerSetup? LoadSetup(string path, out Assembly? program, out string? why)
    {
        program = null;
        string full = Path.GetFullPath(path);
        if (!File.Exists(full))
        {
            why = $"no assembly at '{full}'.";
            return null;
        }
        var resolver = new AssemblyDependencyResolver(full);
        // The default context resolves this tool's assemblies (XCall's, so the program and the tool share their
        // types) before it asks here for the program's own dependencies.
        AssemblyLoadContext.Default.Resolving += (context, name) => resolver.ResolveAssemblyToPath(name) is { } found ? context.LoadFromAssemblyPath(found) : null;
        AssemblyLoadContext.Default.ResolvingUnmanagedDll += (_, name) => resolver.ResolveUnmanagedDllToPath(name) is { } found ? NativeLibrary.Load(found) : IntPtr.Zero;
        try
        {
            program = AssemblyLoadContext.Default.LoadFromAssemblyPath(full);
        }
        catch (Exception e) when (e is BadImageFormatException or FileLoadException)
        {
            why = $"cannot load '{full}': {e.Message}";
            return null;
        }
        XCallWorkerAttribute? named = program.GetCustomAttribute<XCallWorkerAttribute>();
        if (named is null)
        {
            why = $"{program.GetName().Name} names no worker setup: add [assembly: XCall.Cluster.XCallWorker(typeof(YourSetup))] with a class implementing IWorkerSetup.";
            return null;
        }
        if (!typeof(IWorkerSetup).IsAssignableFrom(named.Setup) || named.Setup.IsAbstract || named.Setup.GetConstructor(Type.EmptyTypes) is null)
        {
            why = $"{named.Setup.FullName}, the worker setup {program.GetName().Name} names, is not a class implementing IWorkerSetup with a public parameterless constructor.";
            return null;
        }
        why = null;
        return (IWorkerSetup)Activator.CreateInstance(named.Setup)!;
    }
}
