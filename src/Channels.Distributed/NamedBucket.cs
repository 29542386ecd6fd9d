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
    private readonly IConstructHost? _host;
    private readonly ConstructAddress _address;

    internal NamedBucket(string name, Bucket local)
    {
        Name = name;
        _local = local;
    }

    internal NamedBucket(string name, IConstructHost host, ConstructAddress address)
    {
        Name = name;
        _host = host;
        _address = address;
    }

    /// <summary>The bucket's name.</summary>
    public string Name { get; }

    /// <summary>Whether this process hosts the bucket.</summary>
    public bool IsLocal => _local is not null;

    /// <summary>How many processes wait in the bucket now.</summary>
    public int Holding => _local?.Holding ?? Call(static (host, id) => host.Holding(id));

    /// <summary>Waits in the bucket until it is flushed.</summary>
    public void FallInto() => FallIntoAsync().GetAwaiter().GetResult();

    /// <summary>Completes when the bucket is flushed.</summary>
    public async Task FallIntoAsync()
    {
        if (_local is not null)
        {
            await _local.FallIntoAsync().ConfigureAwait(false);
            return;
        }
        try
        {
            await _host!.FallIntoAsync(_address.Id).ConfigureAwait(false);
        }
        catch (XCallDisconnectedException e)
        {
            throw RemoteStatus.Lost(_address, Name, e);
        }
    }

    /// <summary>Releases every process waiting in the bucket; returns how many.</summary>
    public int Flush() => _local?.Flush() ?? Call(static (host, id) => host.Flush(id));

    private int Call(Func<IConstructHost, int, int> remote)
    {
        try
        {
            return remote(_host!, _address.Id);
        }
        catch (XCallDisconnectedException e)
        {
            throw RemoteStatus.Lost(_address, Name, e);
        }
    }
}
