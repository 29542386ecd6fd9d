using System.Collections.Concurrent;

namespace XCall.Parallel.Host;

/// <summary>The objects this rank hosts and the tunnels of the ranks that call them.</summary>
internal sealed class ParallelHost(int rank, ParallelTypes types) : IParallelHost
{
    private readonly ConcurrentDictionary<ulong, HostedObject> _objects = new();
    private readonly ConcurrentDictionary<int, HostTunnel> _tunnels = new();
    private readonly ConcurrentDictionary<ulong, string> _released = new();
    private long _nextId;

    public int Rank => rank;

    public ulong Create(string contract, ulong hash)
    {
        ParallelType type = types.Find(contract)
            ?? throw new InvalidOperationException($"Rank {rank} has no factory for the parallel type {contract}: add it to the ParallelTypes every rank joins with.");
        if (type.Hash != hash)
        {
            throw new InvalidOperationException($"The contract {contract} differs between the caller and rank {rank} (hash 0x{hash:x16} against 0x{type.Hash:x16}): both must run the same build.");
        }
        return Add(type.Create());
    }

    /// <summary>Hosts <paramref name="target"/> (made by a factory of <see cref="ParallelTypes"/>) and returns its id.</summary>
    public ulong Add(object target)
    {
        ParallelType type = types.FindByTarget(target)
            ?? throw new InvalidOperationException($"{target.GetType()} implements no contract of the world's ParallelTypes.");
        ulong id = (ulong)Interlocked.Increment(ref _nextId);
        _objects[id] = new HostedObject(target, type.Dispatcher, type.Contract);
        return id;
    }

    public HostedObject? Find(ulong objectId) => _objects.GetValueOrDefault(objectId);

    /// <summary>What stands for object <paramref name="objectId"/> once it was released: its calls throw <see cref="ObjectDisposedException"/>; null when it never was.</summary>
    public HostedObject? FindReleased(ulong objectId) => _released.TryGetValue(objectId, out string? contract)
        ? new HostedObject(contract, new ReleasedDispatcher(contract, objectId, rank), contract)
        : null;

    public bool Release(ulong objectId)
    {
        if (!_objects.TryRemove(objectId, out HostedObject? released))
        {
            return false;
        }
        _released[objectId] = released.Contract;
        foreach (HostTunnel tunnel in _tunnels.Values)
        {
            tunnel.Forget(objectId); // its runners drop the object once the calls queued before the release ran
        }
        return true;
    }

    public bool Hold(ulong objectId)
    {
        if (!_objects.TryGetValue(objectId, out HostedObject? hosted))
        {
            return false;
        }
        hosted.AddHolder();
        return true;
    }

    public void Drop(ulong objectId)
    {
        if (_objects.TryGetValue(objectId, out HostedObject? hosted) && hosted.RemoveHolder())
        {
            Release(objectId);
        }
    }

    public int Load() => _objects.Count;

    public Task<BatchResult> ExchangeAsync(int clientRank, long sequence, byte[] frames) =>
        _tunnels.GetOrAdd(clientRank, static (client, host) => new HostTunnel(host, client), this).RunAsync(sequence, frames);

    public void Close()
    {
        foreach (HostTunnel tunnel in _tunnels.Values)
        {
            tunnel.Dispose();
        }
    }
}
