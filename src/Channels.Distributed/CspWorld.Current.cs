namespace XCall.Channels.Distributed;

public sealed partial class CspWorld
{
    private static readonly AsyncLocal<CspWorld?> s_current = new();

    /// <summary>
    /// The world of the process running now, for the processes <see cref="DistParallel"/> runs (on a worker, the
    /// worker's world; here, this one): such a process opens the named constructs it uses through it, as CSP.NET's
    /// processes used its <c>Factory</c>. Null outside them.
    /// </summary>
    public static CspWorld? Current => s_current.Value;

    /// <summary>Runs <paramref name="process"/> with <see cref="Current"/> set to <paramref name="world"/> (for it and what it starts).</summary>
    internal static async Task RunInAsync(CspWorld world, IProcess process, CancellationToken cancellationToken)
    {
        s_current.Value = world; // flows to what this method awaits; the caller's value is back when it returns
        await process.RunAsync(cancellationToken).ConfigureAwait(false);
    }
}
