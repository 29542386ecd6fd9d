namespace XCall.Transport.Shm;

// Design: the receiving lent to a thread that comes back. A thread whose WaitReceiving ends over, and that says it will
// wait on this connection again soon (IReplyWait.ComesBack: a thread reading a channel value after value), does not
// re-arm the ring for the sleeping receive thread when it lets go: it leaves the ring disarmed (as its polling had it)
// and marks the channel lent (_lent). A frame the peer publishes meanwhile wakes nobody; the thread, coming back, takes
// the free role and finds it. Re-arming at each release cost a write to the word the peer reads and, whenever the
// peer's next frame beat the thread back (it always does when the thread leaves to make a call of its own), a wake-up
// of the receive thread, which then held the role the thread asked back.
// Any taker of the role ends the lend (TryTakeFreeRole). A lend nobody ends within about a millisecond is ended by
// LendWatch: it wakes the receive thread, which takes the role, reads what came, and sleeps again armed as usual. The
// lend is taken only while the receive thread sleeps on the ring (state A) and is not waiting for the role (state B,
// which the release wakes anyway).
internal sealed partial class ShmChannel
{
    private int _lent; // 1 while lent: the role free, the ring disarmed, the receive thread asleep
    private int _lends; // counts lends, so the watch knows a lend it saw at its last look from a newer one
    private int _lendsSeen; // by the watch
    private int _lendWatched; // 1 while LendWatch looks at this channel

    /// <summary>Tests: the channel's receiving is lent to a thread that said it comes back.</summary>
    internal bool IsLent => Volatile.Read(ref _lent) != 0;

    /// <summary>The holder of the role, its wait over, lends the receiving if it can (see the design note), else re-arms and lets go.</summary>
    private void LendOrRearmAndLetGo(IFrameHandler handler)
    {
        // Not while an answer of ours is owed: its caller may be blocked, not polling, and would wait for the watch.
        long sent = Volatile.Read(ref _callsSent);
        if (Volatile.Read(ref _stopping) != 0 || Volatile.Read(ref _rtSleeping) == 0 || Volatile.Read(ref _rtBlocked) != 0 || _reader.HasData
            || sent != _reader.Answers)
        {
            RearmAndLetGo(handler);
            return;
        }
        Volatile.Write(ref _lends, _lends + 1); // one writer: the role's holder
        Volatile.Write(ref _lent, 1);
        LetGoOfRole(); // a full fence before _lendWatched is read (TickLend drops the channel the other way round)
        if (Volatile.Read(ref _lendWatched) == 0)
        {
            // Tracked after letting go: a lend ended meanwhile by whoever took the role only gives the watch a look for nothing.
            Volatile.Write(ref _lendWatched, 1);
            LendWatch.Track(this);
        }
        if (Volatile.Read(ref _callsSent) != sent && TryTakeFreeRole(Environment.CurrentManagedThreadId))
        {
            RearmAndLetGo(handler); // a call went out meanwhile and its caller may have found the role taken: re-arm for its reply
        }
    }

    /// <inheritdoc/>
    public override void LendReceiving()
    {
        // Only while the receive thread sleeps on an empty ring and nobody holds the role: then what the peer sends next
        // waits for this thread, as after a wait of its own that ended over (LendOrRearmAndLetGo checks the rest).
        if (Volatile.Read(ref _rtSleeping) != 0 && Volatile.Read(ref _roleOwner) == RoleFree && Volatile.Read(ref _lent) == 0 && !_reader.HasData
            && !RunsDetached && Volatile.Read(ref _handler) is { } handler && Volatile.Read(ref _stopping) == 0
            && TryTakeFreeRole(Environment.CurrentManagedThreadId, pollsAll: true))
        {
            LendOrRearmAndLetGo(handler);
        }
    }

    /// <summary>Whoever took the role ends a lend (a plain look first: the field is this side's own). True when it ended
    /// one: frames may then wait in the ring that woke nobody, so the taker must not leave the ring marked with them in it.</summary>
    private bool EndLend()
    {
        if (Volatile.Read(ref _lent) != 0)
        {
            Volatile.Write(ref _lent, 0);
            return true;
        }
        return false;
    }

    /// <summary>
    /// LendWatch, about once a millisecond: a lend it saw at its last look and still standing is ended, and the receive
    /// thread woken to read what came meanwhile. False once the channel stopped or lent nothing for a while (the watch
    /// lets it go; the next lend tracks it again).
    /// </summary>
    internal bool TickLend(ref int idleLooks)
    {
        if (Volatile.Read(ref _stopping) != 0)
        {
            Volatile.Write(ref _lendWatched, 0);
            return false;
        }
        bool lent = Volatile.Read(ref _lent) != 0; // before the count: a newer lend made in between is then not ended at once
        int lends = Volatile.Read(ref _lends);
        if (!lent || lends != _lendsSeen)
        {
            idleLooks = lends == _lendsSeen ? idleLooks + 1 : 0;
            _lendsSeen = lends;
            if (idleLooks < LendWatch.IdleLooksKept)
            {
                return true;
            }
            Interlocked.Exchange(ref _lendWatched, 0); // a full fence before _lends is read again (the lender's is the other way round)
            if (Volatile.Read(ref _lends) != lends)
            {
                Volatile.Write(ref _lendWatched, 1); // a lend came meanwhile, and its lender saw the channel watched
                return true;
            }
            return false;
        }
        idleLooks = 0;
        if (Interlocked.Exchange(ref _lent, 0) != 0)
        {
            // Nobody came back: the receive thread reads the ring again. The wake touches the ring's words, which stay
            // mapped while the count is held (ReleaseResources waits for it after setting _released).
            Interlocked.Increment(ref _wakesOutsideLock);
            try
            {
                if (Volatile.Read(ref _released) == 0)
                {
                    _inSignal.WakeConsumer(remote: false);
                }
            }
            finally
            {
                Interlocked.Decrement(ref _wakesOutsideLock);
            }
        }
        return true;
    }
}

/// <summary>One thread per process that ends the lends of shared-memory channels nobody came back for (see ShmChannel.Lend.cs).
/// A thread of its own, not a timer: timer callbacks run on the pool, which the lend's own readers may be keeping busy.</summary>
internal static class LendWatch
{
    private const int TickMs = 1;

    /// <summary>Looks without a lend after which a channel is let go (about a second).</summary>
    internal const int IdleLooksKept = 1000;

    private static readonly object s_lock = new();
    private static readonly List<(ShmChannel Channel, int IdleLooks)> s_channels = [];
    private static volatile bool s_paused;

    /// <summary>Tests: while set, the watch ends no lend (it looks at nothing).</summary>
    internal static bool Paused
    {
        get => s_paused;
        set => s_paused = value;
    }
    private static Thread? s_thread;

    public static void Track(ShmChannel channel)
    {
        lock (s_lock)
        {
            if (s_channels.Exists(c => ReferenceEquals(c.Channel, channel)))
            {
                return;
            }
            s_channels.Add((channel, 0));
            if (s_thread is null)
            {
                s_thread = new Thread(Run) { IsBackground = true, Name = "xcall lend watch" };
                s_thread.UnsafeStart();
            }
            else if (s_channels.Count == 1)
            {
                Monitor.PulseAll(s_lock);
            }
        }
    }

    private static void Run()
    {
        while (true)
        {
            lock (s_lock)
            {
                while (s_channels.Count == 0)
                {
                    Monitor.Wait(s_lock);
                }
            }
            Thread.Sleep(TickMs);
            if (s_paused)
            {
                continue;
            }
            lock (s_lock)
            {
                for (int i = s_channels.Count - 1; i >= 0; i--)
                {
                    (ShmChannel channel, int idle) = s_channels[i];
                    if (channel.TickLend(ref idle))
                    {
                        s_channels[i] = (channel, idle);
                    }
                    else
                    {
                        s_channels.RemoveAt(i);
                    }
                }
            }
        }
    }
}
