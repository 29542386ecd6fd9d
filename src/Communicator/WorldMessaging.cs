using System.Diagnostics;
using XCall.Cluster;
using XCall.Communicator.Eager;

namespace XCall.Communicator;

/// <summary>What every communicator of one world shares: the world, this rank's mailbox and eager inbox, and the peers' mailboxes and inboxes.</summary>
internal sealed class WorldMessaging : IDisposable
{
    // Design: _lock guards the opening of _peers and _outboxes (each slot is written once, then read without the
    // lock). _postsSent[r] counts the messages to world rank r that went as one-way calls (Post, PostSync), from
    // the world's start, incremented before each is sent; the peer counts them as they arrive, and an eager write
    // waits until the two agree (see EagerRing). _failed[r] is set once rank r is taken for failed.
    private static readonly long s_openRetryTicks = Stopwatch.Frequency / 100; // a peer whose inbox is not there yet is asked again after 10 ms

    private readonly object _lock = new();
    private readonly IMailbox?[] _peers;
    private readonly EagerOutbox?[] _outboxes;
    private readonly long[] _nextOpen;
    private readonly long[] _postsSent;
    private readonly long[] _largeSent; // by world rank on this node: large messages sent to it as calls, announced or not
    private readonly bool[] _local;
    private readonly bool[] _failed;
    private long _nudges;

    public WorldMessaging(ClusterWorld world, Mailbox mailbox)
    {
        World = world;
        Mailbox = mailbox;
        _peers = new IMailbox?[world.Size];
        _outboxes = new EagerOutbox?[world.Size];
        _nextOpen = new long[world.Size];
        _postsSent = new long[world.Size];
        _largeSent = new long[world.Size];
        _failed = new bool[world.Size];
        _local = [.. Enumerable.Range(0, world.Size).Select(r => r != world.Rank && world.GetNode(r) == world.Node)];
        mailbox.Join(world.Rank, world.Size);
        Inbox = EagerInbox.TryCreate(mailbox, world.Rank, world.Size, [.. Enumerable.Range(0, world.Size).Where(r => _local[r])], WakeLender);
        mailbox.AttachInbox(Inbox);
        world.RankFailed += (_, failure) => OnRankFailed(failure);
        foreach (RankFailedException failure in world.Failures)
        {
            OnRankFailed(failure);
        }
    }

    public ClusterWorld World { get; }

    public Mailbox Mailbox { get; }

    /// <summary>This rank's inbox for small messages from ranks on its node; null when the node offers no shared files or futexes, or has no other rank.</summary>
    public EagerInbox? Inbox { get; }

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

    /// <summary>
    /// Writes a small message into world rank <paramref name="to"/>'s inbox when it is on this node and no message
    /// of ours that went as a call is still on its way; false when the message must go as a call.
    /// </summary>
    /// <exception cref="RankFailedException">The rank was taken for failed.</exception>
    public bool TrySendEager(int to, long context, int tag, ReadOnlySpan<byte> payload)
    {
        if (!_local[to])
        {
            return false;
        }
        if (Volatile.Read(ref _failed[to]))
        {
            World.ThrowIfFailed(to);
        }
        EagerOutbox? outbox = Volatile.Read(ref _outboxes[to]) ?? OpenOutbox(to);
        if (outbox is null || !outbox.TrySend(context, tag, payload, Volatile.Read(ref _postsSent[to]), out bool nudge))
        {
            return false;
        }
        if (nudge)
        {
            Peer(to).Nudge(World.Rank);
        }
        return true;
    }

    /// <summary>Tests: whether large messages to ranks on this node are lent (the default) or go as calls.</summary>
    internal bool LendsMessages { get; set; } = true;

    /// <summary>
    /// Lends a large message to world rank <paramref name="to"/> when it is on this node: its inbox gets a record
    /// naming <paramref name="payload"/>'s memory, which it copies straight into the matching receive's buffer; returns
    /// once it has (or held a copy for a later receive). This thread polls its own inbox meanwhile, so two ranks
    /// that lend to each other both go on. False when the message must go as a call (nothing was lent).
    /// </summary>
    /// <exception cref="RankFailedException">The rank failed before it took the message.</exception>
    /// <exception cref="IOException">The rank could not read the message from this process's memory.</exception>
    public unsafe bool TryLend(int to, long context, int tag, ReadOnlySpan<byte> payload)
    {
        if (!_local[to] || Inbox is not { } inbox || !LendsMessages)
        {
            return false;
        }
        if (Volatile.Read(ref _failed[to]))
        {
            World.ThrowIfFailed(to);
        }
        EagerOutbox? outbox = Volatile.Read(ref _outboxes[to]) ?? OpenOutbox(to);
        if (outbox is null)
        {
            return false;
        }
        fixed (byte* bytes = payload)
        {
            if (!outbox.TryLend(context, tag, (ulong)bytes, payload.Length, Volatile.Read(ref _postsSent[to]), out long number, out bool nudge))
            {
                return false;
            }
            LentAnswer answer = LentAnswer.None;
            try
            {
                if (nudge)
                {
                    Peer(to).Nudge(World.Rank);
                }
                inbox.WaitLent(
                    () => (answer = outbox.AnswerTo(number)) != LentAnswer.None || Volatile.Read(ref _failed[to]),
                    () =>
                    {
                        if (!outbox.Claimed(number))
                        {
                            Interlocked.Increment(ref _nudges);
                            Peer(to).Nudge(World.Rank); // no receive took the message yet: the peer holds a copy
                        }
                    });
            }
            finally
            {
                outbox.EndLend(answer);
            }
            switch (answer)
            {
                case LentAnswer.Taken:
                    return true;
                case LentAnswer.Refused:
                    return false;
                case LentAnswer.Failed:
                    throw new IOException($"Rank {to} could not read a {payload.Length}-byte message from this process's memory.");
                default:
                    World.ThrowIfFailed(to);
                    throw new RankFailedException(to, "it failed before it took a message lent to it");
            }
        }
    }

    /// <summary>Rings the bell of world rank <paramref name="rank"/>, whose lent message this rank answered.</summary>
    private void WakeLender(int rank)
    {
        try
        {
            (Volatile.Read(ref _outboxes[rank]) ?? OpenOutbox(rank))?.RingBell();
        }
        catch (XCallException)
        {
            // The lender is gone: nobody waits for the bell.
        }
    }

    /// <summary>Announces a large message about to go to world rank <paramref name="to"/> as a call, when it has an inbox mapped here.</summary>
    public void AnnounceLarge(int to)
    {
        if (_local[to])
        {
            long number = Interlocked.Increment(ref _largeSent[to]);
            (Volatile.Read(ref _outboxes[to]) ?? OpenOutbox(to))?.Announce(number);
        }
    }

    /// <summary>Tests: the messages to world rank <paramref name="to"/> written into its inbox, and those sent as one-way calls.</summary>
    public (long Eager, long Posted) SentTo(int to) => (Volatile.Read(ref _outboxes[to])?.Sent ?? 0, Volatile.Read(ref _postsSent[to]));

    /// <summary>Tests: how many lent messages this rank's senders nudged their receivers for (no receive had started copying them after the first wait).</summary>
    public long Nudges => Volatile.Read(ref _nudges);

    /// <summary>Tests: the messages lent to world rank <paramref name="to"/>.</summary>
    public long LentTo(int to) => Volatile.Read(ref _outboxes[to])?.Lent ?? 0;

    /// <summary>Counts a message about to go to world rank <paramref name="to"/> as a one-way call.</summary>
    public void CountPost(int to) => Interlocked.Increment(ref _postsSent[to]);

    /// <summary>Maps the inbox of <paramref name="to"/>, asking it for its path; null (and not asked again for a while) when it has none yet.</summary>
    private EagerOutbox? OpenOutbox(int to)
    {
        long now = Stopwatch.GetTimestamp();
        lock (_lock)
        {
            if (_outboxes[to] is { } opened)
            {
                return opened;
            }
            if (now < _nextOpen[to])
            {
                return null;
            }
            _nextOpen[to] = now + s_openRetryTicks;
        }
        string? path = Peer(to).InboxPath();
        EagerOutbox? outbox = path is null ? null : EagerOutbox.TryOpen(path, World.Rank, World.Size);
        if (outbox is null)
        {
            return null;
        }
        lock (_lock)
        {
            if (_outboxes[to] is { } raced)
            {
                outbox.Dispose();
                return raced;
            }
            Volatile.Write(ref _outboxes[to], outbox);
            return outbox;
        }
    }

    private void OnRankFailed(RankFailedException failure)
    {
        if ((uint)failure.Rank < (uint)_failed.Length)
        {
            Volatile.Write(ref _failed[failure.Rank], true);
        }
        // What the rank wrote into our inbox before it ended was sent: delivered first, it completes the receives
        // it matches (a rank that leaves a barrier and exits at once wrote its last message before it left), and
        // only the receives nothing matches fail.
        Inbox?.Drain(failure.Rank);
        Mailbox.FailRank(failure);
        Inbox?.WakeIfSleeping(); // a lender waiting for the failed rank's answer
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

    /// <summary>Fails the receives that wait (see <see cref="Mailbox.Close"/>) and unmaps the peers' inboxes and this rank's, once the world is left.</summary>
    public void Dispose()
    {
        Mailbox.Close(); // each failed receive rings the inbox's bell for a thread asleep on it
        lock (_lock)
        {
            foreach (EagerOutbox? outbox in _outboxes)
            {
                outbox?.Dispose();
            }
        }
        Mailbox.AttachInbox(null);
        Inbox?.Dispose();
    }
}
