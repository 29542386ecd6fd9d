using XCall.Transport.Shm.Interop;

namespace XCall.Transport.Shm.Ring;

// Design: sleeping and waking for one ring. A sleeper reads its wake sequence word, sets the shared
// "sleeping" word with a full fence (interlocked exchange; 1 = the receive thread, 2 = a caller polling for
// its reply, each with its own sequence word), re-checks its condition, then waits on the sequence word for
// the value it read. A waker first makes its change visible with a full fence (the producer publishes a
// record, the consumer releases room, both through an interlocked exchange), then reads the sleeping word;
// only if it is set does it clear it, bump the matching sequence word and issue FUTEX_WAKE. With a fence on
// both sides, either the sleeper's re-check sees the change or the waker sees the flag: no lost wake-up, and
// no system call at all while the other side is awake. Bumping the sequence before waking makes a sleeper
// that has not reached FUTEX_WAIT yet return at once (the word no longer holds the expected value).
// Without futexes (not Linux), the sequence words stay and the sleep is a local semaphore; a wake for the
// other process is a byte on the rendezvous socket that its monitor thread turns into a release.
// A third value, 3 = "callers poll" (MarkCallerPolls), is no sleeper's: callers of the consumer's side write it
// while its receive thread sleeps, and the producer then wakes that thread for every frame except the ones they
// poll for (see WakeConsumerIfSleeping and the design notes in ShmChannel.Receive.cs).

/// <summary>
/// Sleeping and waking for one ring: the consumer side sleeps when the ring is empty, the producer when it
/// is full. Futexes on words in the ring's control block where they work; elsewhere local semaphores, with
/// a byte on the rendezvous socket (<see cref="PokeData"/>, <see cref="PokeLeader"/>, <see cref="PokeSpace"/>)
/// to reach the peer.
/// </summary>
internal sealed unsafe class RingSignal
{
    /// <summary>Socket byte: "the ring you consume has a new record".</summary>
    public const byte PokeData = (byte)'D';

    /// <summary>Socket byte: "the ring you consume has a new record" for a caller that polls it.</summary>
    public const byte PokeLeader = (byte)'L';

    /// <summary>Socket byte: "the ring you produce into has room again".</summary>
    public const byte PokeSpace = (byte)'S';

    private const int ReceiveThreadArmed = 1;
    private const int LeaderArmed = 2;
    private const int CallerPolls = 3;

    private readonly ShmRing _ring;
    private readonly string _endpoint;
    private readonly bool _useFutex;
    private readonly SemaphoreSlim? _consumerLocal;
    private readonly SemaphoreSlim? _leaderLocal;
    private readonly SemaphoreSlim? _producerLocal;
    private readonly Action<byte>? _poke;
    private volatile string? _stopReason;

    /// <summary>Creates the signal; <paramref name="poke"/> (portable mode only) sends a byte to the peer,
    /// or null when both sides are in this process.</summary>
    public RingSignal(ShmRing ring, ShmIdleStrategy strategy, string endpoint, bool portable, Action<byte>? poke)
    {
        _ring = ring;
        _endpoint = endpoint;
        Strategy = strategy;
        _useFutex = !portable && Futex.IsSupported;
        if (!_useFutex)
        {
            _consumerLocal = new SemaphoreSlim(0);
            _leaderLocal = new SemaphoreSlim(0);
            _producerLocal = new SemaphoreSlim(0);
            _poke = poke;
        }
    }

    public ShmIdleStrategy Strategy { get; }

    public bool UsesFutex => _useFutex;

    public bool IsStopping => _stopReason is not null;

    /// <summary>Tests: called each time a producer waits for room (back-pressure).</summary>
    internal Action? SpaceWaitObserved { get; set; }

    // ---------------------------------------------------------------- consumer side

    /// <summary>The consumer's wake sequence, read before arming.</summary>
    public int ConsumerSeq => Volatile.Read(ref *_ring.ConsumerWakeSeq);

    /// <summary>The receive thread asks the producer for a wake-up; a full fence, so a re-check of the
    /// ring afterwards is safe.</summary>
    public void ArmConsumer() => Interlocked.Exchange(ref *_ring.ConsumerSleeping, ReceiveThreadArmed);

    /// <summary>A caller polling for its reply asks for a wake-up on the leader word; a full fence.</summary>
    public void ArmLeader() => Interlocked.Exchange(ref *_ring.ConsumerSleeping, LeaderArmed);

    /// <summary>Tells the producer not to bother waking us (a thread of ours is polling).</summary>
    public void DisarmConsumer() => Volatile.Write(ref *_ring.ConsumerSleeping, 0);

    /// <summary><see cref="DisarmConsumer"/>, written only when the word says something else (the producer reads it after
    /// every frame, and each write would bring its cache line back across cores).</summary>
    public void DisarmConsumerIfArmed()
    {
        if (Volatile.Read(ref *_ring.ConsumerSleeping) != 0)
        {
            Volatile.Write(ref *_ring.ConsumerSleeping, 0);
        }
    }

    /// <summary>
    /// Tells the producer, while the receive thread sleeps, that a caller of ours polls (or that every call of ours
    /// is answered): it wakes nobody for a frame that needs no other reader (<see cref="WakeConsumerIfSleeping(long, bool)"/>),
    /// and the receive thread for any other. Written only when the word says something else: the producer reads it
    /// after every frame, and each write would bring its cache line back across cores.
    /// </summary>
    public void MarkCallerPolls()
    {
        if (Volatile.Read(ref *_ring.ConsumerSleeping) != CallerPolls)
        {
            Volatile.Write(ref *_ring.ConsumerSleeping, CallerPolls);
        }
    }

    /// <summary>True while the word holds <see cref="MarkCallerPolls"/>'s mark: no wake-up cleared it and no leader's
    /// sleep (<see cref="ArmLeader"/>, then <see cref="DisarmConsumer"/>) replaced it since.</summary>
    public bool IsMarkedCallerPolls => Volatile.Read(ref *_ring.ConsumerSleeping) == CallerPolls;

    /// <summary>The leader wake sequence, read before <see cref="ArmLeader"/>.</summary>
    public int LeaderSeq => Volatile.Read(ref *_ring.LeaderWakeSeq);

    /// <summary>
    /// How long the receive thread sleeps at most after its reader took a held batch head (<see cref="BoundNextConsumerWait"/>):
    /// a frame the writer added to that batch as the head was taken gets no wake-up check (RingWriter's design notes), and
    /// is read after this at the latest.
    /// </summary>
    public const int HeldMissBoundMs = 1;

    private int _boundNextWait;

    /// <summary>The reader took a held batch head: the next <see cref="WaitConsumer"/> or <see cref="WaitLeader"/> sleeps at
    /// most <see cref="HeldMissBoundMs"/>.</summary>
    public void BoundNextConsumerWait() => Volatile.Write(ref _boundNextWait, 1);

    private bool TakeWaitBound() => Volatile.Read(ref _boundNextWait) != 0 && Interlocked.Exchange(ref _boundNextWait, 0) != 0;

    /// <summary>Sleeps until the consumer wake sequence moves from <paramref name="seq"/> (or, once after a held head was
    /// taken, <see cref="HeldMissBoundMs"/> passed).</summary>
    public void WaitConsumer(int seq)
    {
        int timeoutMs = TakeWaitBound() ? HeldMissBoundMs : -1;
        if (_useFutex)
        {
            Futex.Wait(_ring.ConsumerWakeSeq, seq, timeoutMs);
        }
        else if (ConsumerSeq == seq)
        {
            _consumerLocal!.Wait(timeoutMs);
        }
    }

    /// <summary>Sleeps until the leader wake sequence moves from <paramref name="seq"/> or the timeout passes (at most
    /// <see cref="HeldMissBoundMs"/> once after a held head was taken).</summary>
    public void WaitLeader(int seq, int timeoutMs)
    {
        if (TakeWaitBound())
        {
            timeoutMs = timeoutMs < 0 ? HeldMissBoundMs : Math.Min(timeoutMs, HeldMissBoundMs);
        }
        if (_useFutex)
        {
            Futex.Wait(_ring.LeaderWakeSeq, seq, timeoutMs);
        }
        else if (LeaderSeq == seq)
        {
            _leaderLocal!.Wait(timeoutMs);
        }
    }

    /// <summary>Whether the consumer's callers poll for a frame of <paramref name="header"/>'s kind (see
    /// <see cref="WakeConsumerIfSleeping(long, bool)"/>): a reply or an error (but a long wait's, <see cref="FrameFlags.LongWait"/>,
    /// which nobody polls for), or a call nested in one of their calls.</summary>
    public static bool IsPolledFor(in FrameHeader header) =>
        header.Kind is FrameKind.Reply or FrameKind.Error ? (header.Flags & FrameFlags.LongWait) == 0 : header.Kind == FrameKind.Call && (header.Flags & FrameFlags.Nested) != 0;

    /// <summary>Producer, after publishing through a full fence: wakes the consumer side if it sleeps.</summary>
    public void WakeConsumerIfSleeping() => _ = WakeConsumerIfSleeping(long.MaxValue, polledFor: false);

    /// <summary>
    /// Producer, after publishing records up to <paramref name="publishedEnd"/> through a full fence: wakes the
    /// consumer side if it sleeps and has not consumed them yet. A consumer that already moved past them
    /// (a caller that polled its reply and re-armed the ring for the next one) needs no wake-up for them, nor
    /// does a frame a caller of the consumer's side polls for (<paramref name="polledFor"/>: a reply or error, or
    /// a call nested in one of its calls, that did not stream: a streamed frame's start may have been read by
    /// the receive thread, which then slept again) while the word holds <see cref="MarkCallerPolls"/>'s mark.
    /// </summary>
    /// <returns>True when it woke somebody.</returns>
    public bool WakeConsumerIfSleeping(long publishedEnd, bool polledFor)
    {
        int armed = ClaimConsumerWake(publishedEnd, polledFor);
        IssueConsumerWake(armed);
        return armed != 0;
    }

    /// <summary>
    /// The first half of <see cref="WakeConsumerIfSleeping(long, bool)"/>: decides whether the consumer side needs a
    /// wake-up and claims it (clears the sleeping word), returning what was armed (0: nobody to wake). The caller
    /// then issues it with <see cref="IssueConsumerWake"/>, possibly later and on another lock's outside: a sleeper
    /// that has not reached its wait yet returns from it once the sequence word moves, one that re-armed meanwhile
    /// takes the late wake-up as a spurious one and re-checks.
    /// </summary>
    public int ClaimConsumerWake(long publishedEnd, bool polledFor)
    {
        int* sleeping = _ring.ConsumerSleeping;
        int word = Volatile.Read(ref *sleeping);
        if (word != 0 && !(polledFor && word == CallerPolls) && Volatile.Read(ref *_ring.ConsumerPosition) < publishedEnd)
        {
            return Interlocked.Exchange(ref *sleeping, 0);
        }
        return 0;
    }

    /// <summary>Issues a wake-up claimed by <see cref="ClaimConsumerWake"/>: the caller that sleeps on the ring for its
    /// reply, or the receive thread (also for a frame no caller polls for while one does).</summary>
    public void IssueConsumerWake(int armed)
    {
        if (armed == LeaderArmed)
        {
            WakeLeader(remote: true);
        }
        else if (armed != 0)
        {
            WakeConsumer(remote: true);
        }
    }

    /// <summary>Wakes the receive thread unconditionally (close, hand-over, or a record published).</summary>
    public void WakeConsumer(bool remote)
    {
        Interlocked.Increment(ref *_ring.ConsumerWakeSeq);
        if (_useFutex)
        {
            Futex.Wake(_ring.ConsumerWakeSeq, int.MaxValue);
        }
        else if (remote && _poke is not null)
        {
            _poke(PokeData);
        }
        else
        {
            _consumerLocal!.Release();
        }
    }

    /// <summary>Wakes a caller sleeping on the ring for its reply.</summary>
    public void WakeLeader(bool remote)
    {
        Interlocked.Increment(ref *_ring.LeaderWakeSeq);
        if (_useFutex)
        {
            Futex.Wake(_ring.LeaderWakeSeq, int.MaxValue);
        }
        else if (remote && _poke is not null)
        {
            _poke(PokeLeader);
        }
        else
        {
            _leaderLocal!.Release();
        }
    }

    // ---------------------------------------------------------------- producer side

    /// <summary>
    /// One idle turn of a producer waiting for room: spins or yields per the strategy, then sleeps until the
    /// consumer moves past <paramref name="observedConsumer"/>. Throws once the channel stops.
    /// </summary>
    public void WaitForSpace(ref IdleSpinner spinner, long observedConsumer, int timeoutMs = -1)
    {
        ThrowIfStopping();
        SpaceWaitObserved?.Invoke();
        if (spinner.SpinOnce(Strategy))
        {
            return;
        }
        int seq = Volatile.Read(ref *_ring.ProducerWakeSeq);
        Interlocked.Exchange(ref *_ring.ProducerSleeping, 1);
        if (Volatile.Read(ref *_ring.ConsumerPosition) == observedConsumer && !IsStopping)
        {
            if (_useFutex)
            {
                Futex.Wait(_ring.ProducerWakeSeq, seq, timeoutMs);
            }
            else if (Volatile.Read(ref *_ring.ProducerWakeSeq) == seq)
            {
                _producerLocal!.Wait(timeoutMs);
            }
        }
        Volatile.Write(ref *_ring.ProducerSleeping, 0);
        ThrowIfStopping();
    }

    /// <summary>Consumer, after releasing through a full fence: wakes a producer that waits for room.</summary>
    public void WakeProducerIfSleeping()
    {
        int* sleeping = _ring.ProducerSleeping;
        if (Volatile.Read(ref *sleeping) != 0 && Interlocked.Exchange(ref *sleeping, 0) != 0)
        {
            WakeProducer(remote: true);
        }
    }

    /// <summary>Wakes a producer waiting for room unconditionally.</summary>
    public void WakeProducer(bool remote)
    {
        Interlocked.Increment(ref *_ring.ProducerWakeSeq);
        if (_useFutex)
        {
            Futex.Wake(_ring.ProducerWakeSeq, int.MaxValue);
        }
        else if (remote && _poke is not null)
        {
            _poke(PokeSpace);
        }
        else
        {
            _producerLocal!.Release();
        }
    }

    // ---------------------------------------------------------------- portable mode and stopping

    /// <summary>A byte the peer sent on the rendezvous socket (portable mode).</summary>
    public void OnPoke(byte poke)
    {
        if (poke == PokeData)
        {
            _consumerLocal?.Release();
        }
        else if (poke == PokeLeader)
        {
            _leaderLocal?.Release();
        }
        else if (poke == PokeSpace)
        {
            _producerLocal?.Release();
        }
    }

    /// <summary>Makes every later wait throw <see cref="XCallDisconnectedException"/> with <paramref name="reason"/>.</summary>
    public void Stop(string reason) => _stopReason ??= reason;

    /// <summary>Throws if the channel stopped.</summary>
    public void ThrowIfStopping()
    {
        if (_stopReason is { } reason)
        {
            throw new XCallDisconnectedException(_endpoint, reason);
        }
    }
}
