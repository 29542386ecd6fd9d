using XCall.Cluster;

namespace XCall.Channels.Distributed;

/// <summary>
/// Named CSP constructs (channels, barriers, buckets) shared by the processes of a world: the process that
/// creates a named channel hosts it (the in-process channel), the others reach it by name through remote ends
/// that copy values over XCall (shared memory on one node, TCP across nodes). In stand-alone mode every name
/// lives in this process and every end is the in-process one, so the same program runs without any remoting.
/// </summary>
/// <remarks>
/// A channel is hosted at its "one" end: a One2One and an Any2One by its reader (whose in-process input can
/// guard an <see cref="Alternative"/>), a One2Any by its writer (whose output can guard), an Any2Any by the
/// process that creates it. Opening an end waits until some process created the name.
/// </remarks>
public sealed partial class CspWorld : IAsyncDisposable
{
    // Design: _lock guards _local and _waiting. A name is put in _local (and in stand-alone mode its waiters are
    // completed) before it is registered in the world's directory, so a peer that resolves the name finds the
    // construct hosted; waiters run outside the lock (their continuations are asynchronous).
    private readonly Lock _lock = new();
    private readonly ConstructHost _host = new();
    private readonly Dictionary<string, object> _local = new(StringComparer.Ordinal);
    private readonly Dictionary<string, TaskCompletionSource<object>> _waiting = new(StringComparer.Ordinal);
    private readonly bool _ownsWorld;

    private CspWorld(ClusterWorld? world, bool ownsWorld)
    {
        World = world;
        _ownsWorld = ownsWorld;
        world?.Server.Add<IConstructHost>(_host);
    }

    /// <summary>The cluster world the names are shared in; null in stand-alone mode.</summary>
    public ClusterWorld? World { get; }

    /// <summary>Whether every named construct lives in this process.</summary>
    public bool IsStandAlone => World is null;

    /// <summary>This process's rank (0 in stand-alone mode).</summary>
    public int Rank => World?.Rank ?? 0;

    /// <summary>How many processes share the names (1 in stand-alone mode).</summary>
    public int Size => World?.Size ?? 1;

    /// <summary>A world of this process alone: named constructs are in-process ones, as CSP.NET's <c>InitStandAlone</c> gave.</summary>
    public static CspWorld StandAlone() => new(null, ownsWorld: false);

    /// <summary>
    /// Shares names in <paramref name="world"/>, which this process already joined; offers the constructs this
    /// process hosts on <see cref="ClusterWorld.Server"/>. Disposing the result leaves the world to its owner.
    /// </summary>
    /// <exception cref="InvalidOperationException">Another <see cref="CspWorld"/> already serves on this world.</exception>
    public static CspWorld Attach(ClusterWorld world)
    {
        ArgumentNullException.ThrowIfNull(world);
        return new CspWorld(world, ownsWorld: false);
    }

    /// <summary>
    /// Joins the world the launcher started (<c>xcall run</c>, <c>mpirun</c>, <c>srun</c>); a process started without
    /// a launcher runs stand-alone. Disposing the result leaves the world.
    /// </summary>
    public static async Task<CspWorld> JoinAsync(ClusterOptions? options = null, CancellationToken cancellationToken = default)
    {
        options ??= ClusterOptions.Default;
        WorldEnvironment environment = options.Environment ?? WorldEnvironment.Detect();
        if (environment.Launcher == Launcher.None && environment.Size == 1)
        {
            return StandAlone();
        }
        ClusterWorld world = await ClusterWorld.JoinAsync(options with { Environment = environment }, cancellationToken).ConfigureAwait(false);
        return new CspWorld(world, ownsWorld: true);
    }

    /// <summary>Leaves the world when this object joined it.</summary>
    public async ValueTask DisposeAsync()
    {
        if (_ownsWorld)
        {
            await World!.DisposeAsync().ConfigureAwait(false);
        }
    }
}
