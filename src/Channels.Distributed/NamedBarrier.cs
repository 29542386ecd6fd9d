namespace XCall.Channels.Distributed;

/// <summary>
/// A barrier that processes of several OS processes and machines share by name: every enrolled process that
/// syncs waits until all enrolled processes (wherever they run) have synced. The process that named it first
/// hosts it; in that process and in stand-alone mode it is the in-process <see cref="Barrier"/> itself.
/// </summary>
/// <remarks>When the hosting process dies a pending and every later sync fails with <see cref="Cluster.RankFailedException"/>.</remarks>
public sealed class NamedBarrier
{
    private readonly Barrier? _local;
    private readonly HostLink? _link;

    internal NamedBarrier(string name, Barrier local)
    {
        Name = name;
        _local = local;
    }

    internal NamedBarrier(string name, IConstructHost host, ConstructAddress address)
    {
        Name = name;
        _link = new HostLink(host, address, name);
    }

    /// <summary>The barrier's name.</summary>
    public string Name { get; }

    /// <summary>Whether this process hosts the barrier (every sync is then an in-process one).</summary>
    public bool IsLocal => _local is not null;

    /// <summary>Waits until every enrolled process has synced.</summary>
    public void Sync()
    {
        if (_local is not null)
        {
            Unconfirmed.ConfirmAll();
            _local.Sync();
            return;
        }
        SyncAsync().GetAwaiter().GetResult();
    }

    /// <summary>Completes when every enrolled process has synced.</summary>
    public async Task SyncAsync()
    {
        if (_local is not null)
        {
            // What this process wrote to remote buffered channels is in their buffers before it syncs, as in-process.
            await Unconfirmed.ConfirmAllAsync().ConfigureAwait(false);
            await _local.SyncAsync().ConfigureAwait(false);
            return;
        }
        await _link!.CallAsync(static (host, id) => host.SyncAsync(id)).ConfigureAwait(false);
    }

    /// <summary>Enrolls one more process: rounds now wait for it too.</summary>
    public void Enroll()
    {
        if (_local is not null)
        {
            _local.Enroll();
            return;
        }
        _link!.Call(0, static (host, id, _) => host.Enroll(id));
    }

    /// <summary>Resigns one process: rounds no longer wait for it.</summary>
    public void Resign()
    {
        if (_local is not null)
        {
            _local.Resign();
            return;
        }
        _link!.Call(0, static (host, id, _) => host.Resign(id));
    }
}
