namespace XCall.Channels.Distributed;

/// <summary>
/// A bucket that processes of several OS processes and machines share by name: processes fall into it and wait
/// until some process flushes it. The process that named it first hosts it; in that process and in stand-alone
/// mode it is the in-process <see cref="Bucket"/> itself.
/// </summary>
/// <remarks>When the hosting process dies a pending and every later operation fails with <see cref="Cluster.RankFailedException"/>.</remarks>
public sealed class NamedBucket
{
    private readonly Bucket? _local;
    private readonly HostLink? _link;

    internal NamedBucket(string name, Bucket local)
    {
        Name = name;
        _local = local;
    }

    internal NamedBucket(string name, IConstructHost host, ConstructAddress address)
    {
        Name = name;
        _link = new HostLink(host, address, name);
    }

    /// <summary>The bucket's name.</summary>
    public string Name { get; }

    /// <summary>Whether this process hosts the bucket.</summary>
    public bool IsLocal => _local is not null;

    /// <summary>How many processes wait in the bucket now.</summary>
    public int Holding => _local?.Holding ?? _link!.Call(0, static (host, id, _) => host.Holding(id));

    /// <summary>Waits in the bucket until it is flushed.</summary>
    public void FallInto() => FallIntoAsync().GetAwaiter().GetResult();

    /// <summary>Completes when the bucket is flushed.</summary>
    public async Task FallIntoAsync()
    {
        if (_local is not null)
        {
            await Unconfirmed.ConfirmAllAsync().ConfigureAwait(false);
            await _local.FallIntoAsync().ConfigureAwait(false);
            return;
        }
        await _link!.CallAsync(static (host, id) => host.FallIntoAsync(id)).ConfigureAwait(false);
    }

    /// <summary>Releases every process waiting in the bucket; returns how many.</summary>
    public int Flush()
    {
        if (_local is not null)
        {
            Unconfirmed.ConfirmAll();
            return _local.Flush();
        }
        return _link!.Call(0, static (host, id, _) => host.Flush(id));
    }
}
