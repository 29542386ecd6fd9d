using XCall.Cluster;

namespace XCall.Communicator;

/// <summary>What every communicator of one world shares: the world, this rank's mailbox and the peers' mailboxes.</summary>
internal sealed class WorldMessaging
{
    private readonly object _lock = new();
    private readonly IMailbox?[] _peers;

    public WorldMessaging(ClusterWorld world, Mailbox mailbox)
    {
        World = world;
        Mailbox = mailbox;
        _peers = new IMailbox?[world.Size];
        mailbox.Join(world.Rank, world.Size);
        world.RankFailed += (_, failure) => mailbox.FailRank(failure);
        foreach (RankFailedException failure in world.Failures)
        {
            mailbox.FailRank(failure);
        }
    }

    public ClusterWorld World { get; }

    public Mailbox Mailbox { get; }

    /// <summary>The mailbox of world rank <paramref name="rank"/> (this rank's own for itself), opened on first use.</summary>
    public IMailbox Peer(int rank)
    {
        IMailbox? peer = Volatile.Read(ref _peers[rank]);
        return peer ?? Open(rank);
    }

    private IMailbox Open(int rank)
    {
        IMailbox peer = rank == World.Rank ? Mailbox : World.OpenAsync<IMailbox>(rank).GetAwaiter().GetResult();
        lock (_lock)
        {
            return _peers[rank] ??= peer;
        }
    }

    /// <summary>The exception for a call to <paramref name="rank"/> that failed: the rank's failure when the world knows it, else one naming the rank.</summary>
    public RankFailedException Failed(int rank, XCallException error)
    {
        if (error is RankFailedException failed)
        {
            return failed;
        }
        try
        {
            World.ThrowIfFailed(rank);
        }
        catch (RankFailedException known)
        {
            return known;
        }
        return new RankFailedException(rank, $"a message to it could not be sent ({error.Message})", error);
    }
}
