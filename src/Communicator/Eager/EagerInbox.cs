using System.Diagnostics;
using System.IO.MemoryMappedFiles;
using System.Runtime.CompilerServices;
using XCall.Transport;
using XCall.Transport.Shm;
using XCall.Transport.Shm.Interop;

namespace XCall.Communicator.Eager;

/// <summary>
/// This rank's inbox for small messages from ranks on its node: a shared file holding one <see cref="EagerRing"/>
/// per source rank and a bell (a futex word) the senders ring when a reader sleeps. The thread of a blocking
/// receive polls the rings itself (<see cref="Poll"/>), so a small message costs no call, no thread hop and,
/// while the receiver spins, no wake-up; a progress thread polls while asynchronous receives or probes wait.
/// </summary>
internal sealed unsafe class EagerInbox : IDisposable
{
    // Design:
    // - File layout: the bell's sequence (int) at 0, the count of sleeping readers (int) at 64, the senders that
    //   mapped the file and the number expected to (ints) at 128 and 132, then the rings, one per world rank (the
    //   own rank's unused), EagerRing.Bytes each, from HeaderBytes. The file is named after the receiver's process
    //   id; the last expected sender deletes it once mapped, the receiver when it leaves, and any rank joining
    //   later on the node deletes those of processes that no longer run.
    // - One consumer per ring: _consuming[s] is taken with an interlocked exchange (a full fence) by whoever polls
    //   ring s (a waiting receive, the progress thread, or a call from s that drains the ring before its own
    //   message, see Mailbox); records go to the mailbox in ring order while the flag is held.
    // - While a source's last message came as a large call (not lent: see below), receives from it read its
    //   connection instead, with the source's ring flagged ReaderInCalls (see EagerRing): one wake-up for such a
    //   message, which runs on the receiving thread.
    // - Lent messages (LendTag records): the first from a source is tried with a read of its first bytes
    //   (_readable[s]: 0 unknown, 1 readable, 2 not); a source whose memory cannot be read is answered Refused at
    //   once and sends as calls. Otherwise the mailbox copies the bytes when a receive takes the message and
    //   answers it then (Answer, which rings the sender's bell through _wakeSender).
    // - Sleeping (a lost-wake-up-safe Dekker pair): a reader increments the sleepers (a full fence), reads the
    //   bell, polls once more, and only then waits on the bell's value; a sender publishes its record, fences,
    //   and rings (increments the bell and wakes) when it sees a sleeper. A receive completed by another thread
    //   (a large message, a failure) rings the same way (WakeIfSleeping).
    // - Unmapping waits for _users to drop to 0: every use of the mapping enters (Enter) and leaves, and none
    //   enters once _disposed is set.
    public const int HeaderBytes = 256;

    private const string FilePrefix = "xcall-comm-";
    private const int OpenersOffset = 128; // senders that mapped the inbox
    private const int ExpectedOpenersOffset = 132; // the receiver's node-local peers

    private const int YieldMicroseconds = 200; // how long a waiter yields before it sleeps
    private const int CrowdedYieldMicroseconds = 2000; // the same on a crowded node: longer than a collective's step, which a peer waiting for a core takes
    private const int BusyYieldMicroseconds = 20; // a yield that took longer than this ran another thread: sleep instead
    private const int SleepSliceMs = 50; // a bound on any sleep, as a safety net: a wake-up is never expected to be lost
    private const int LendSliceMs = 1; // a lender's first sleep: past it, the receiver is nudged to take the message from its connection's thread

    private static readonly TimeSpan s_pumpTimeout = TimeSpan.FromMilliseconds(20); // the announced call is on its way: this only bounds a wait for a call that never comes
    private static readonly TimeSpan s_callSleep = TimeSpan.FromMilliseconds(SleepSliceMs);
    private static readonly long s_yieldTicks = Stopwatch.Frequency * YieldMicroseconds / 1_000_000;
    private static readonly long s_crowdedYieldTicks = Stopwatch.Frequency * CrowdedYieldMicroseconds / 1_000_000;
    private static readonly long s_busyYieldTicks = Stopwatch.Frequency * BusyYieldMicroseconds / 1_000_000;
    private static readonly long s_noYieldTicks = Stopwatch.Frequency / 20; // after a yield found the cores busy, waits sleep without yielding for 50 ms

    private readonly Mailbox _mailbox;
    private readonly int _self;
    private readonly int[] _sources; // world ranks on this node other than this one
    private readonly int[] _consuming;
    private readonly long[] _largeAnnounced; // by source: the number (counted from 1) of the last large message its marker records announced
    private readonly long[] _largeArrived; // by source: large messages that arrived as calls
    private readonly bool[] _largeLast; // by source: its last message was a large one (a call): a receive from it reads its connection
    private readonly long[] _largePumped; // by source: the last announced message a waiting receive read the connection for (by the waiting threads)
    private readonly int[] _readable; // by source: whether its lent messages can be read (see the design note)
    private readonly Action<int> _wakeSender;
    private readonly MemoryMappedFile _file;
    private readonly MemoryMappedViewAccessor _view;
    private readonly byte* _base;
    private readonly int _spinTurns;
    private readonly bool _crowded; // the node's ranks outnumber its cores: a yield is expected to run another rank
    private readonly long _yieldTicks; // how long a waiter yields before it sleeps, in Stopwatch ticks
    private readonly ManualResetEventSlim _progressWanted = new(false);
    private readonly Thread _progress;
    private int _users;
    private long _noYieldUntil; // a Stopwatch timestamp: until then waiters sleep after spinning, without yielding
    private volatile bool _disposed;

    private EagerInbox(Mailbox mailbox, int self, int worldSize, int[] sources, Action<int> wakeSender, string path, MemoryMappedFile file, MemoryMappedViewAccessor view)
    {
        _mailbox = mailbox;
        _wakeSender = wakeSender;
        _readable = new int[worldSize];
        _self = self;
        _sources = sources;
        _consuming = new int[worldSize];
        _largeAnnounced = new long[worldSize];
        _largeArrived = new long[worldSize];
        _largePumped = new long[worldSize];
        _largeLast = new bool[worldSize];
        Path = path;
        _file = file;
        _view = view;
        byte* pointer = null;
        view.SafeMemoryMappedViewHandle.AcquirePointer(ref pointer);
        _base = pointer + view.PointerOffset;
        // Ranks that fit on the node's cores spin some tens of microseconds before they yield (many round trips of
        // a small message, and the wait for a peer that was briefly descheduled); more ranks than cores yield at
        // once, so a waiter hands its core to a rank that has work.
        // A crowded node's waiters yield (through their whole yield window, however long each yield takes, as Open
        // MPI's ranks do when oversubscribed) before they sleep: the rank a waiter waits for is then one of the
        // threads its yields run, and no message needs a wake-up. Their window is longer than an uncrowded node's:
        // a step of a large collective (a copy of a megabyte or more at half a core) outlasts a short one, and a
        // waiter that slept then wakes onto a runqueue the scheduler has meanwhile rebalanced.
        _crowded = sources.Length + 1 > Environment.ProcessorCount;
        _spinTurns = _crowded ? 2 : 2048;
        _yieldTicks = _crowded ? s_crowdedYieldTicks : s_yieldTicks;
        _progress = new Thread(ProgressLoop) { IsBackground = true, Name = "xcall comm progress" };
        _progress.Start();
    }

    /// <summary>Tests: how many times a waiting receive slept reading its source's calls' connection (counted by the waiting threads).</summary>
    public long CallSleeps { get; private set; }

    /// <summary>The inbox file's path, which senders on this node map.</summary>
    public string Path { get; }

    /// <summary>Whether messages of <paramref name="source"/> (a world rank, or <see cref="Communicator.AnySource"/>) may come through this inbox.</summary>
    public bool Covers(int source) => source == Communicator.AnySource || Array.IndexOf(_sources, source) >= 0;

    /// <summary>
    /// Makes the inbox of world rank <paramref name="self"/> for the given node-local sources; null where shared files
    /// or futexes are missing. <paramref name="wakeSender"/> rings the bell of a world rank whose lent message was answered.
    /// </summary>
    public static EagerInbox? TryCreate(Mailbox mailbox, int self, int worldSize, int[] sources, Action<int> wakeSender)
    {
        if (!OperatingSystem.IsLinux() || sources.Length == 0 || !Futex.IsSupported || !Directory.Exists("/dev/shm"))
        {
            return null;
        }
        SweepStale();
        string path = System.IO.Path.Combine("/dev/shm", $"{FilePrefix}{Environment.ProcessId}-{Guid.NewGuid():N}");
        long bytes = HeaderBytes + ((long)worldSize * EagerRing.Bytes);
        var options = new FileStreamOptions
        {
            Mode = FileMode.CreateNew,
            Access = FileAccess.ReadWrite,
            Share = FileShare.ReadWrite | FileShare.Delete,
            UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite,
        };
        try
        {
            using var stream = new FileStream(path, options);
            stream.SetLength(bytes);
            MemoryMappedFile file = MemoryMappedFile.CreateFromFile(stream, null, bytes, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: false);
            var inbox = new EagerInbox(mailbox, self, worldSize, sources, wakeSender, path, file, file.CreateViewAccessor(0, bytes, MemoryMappedFileAccess.ReadWrite));
            *(int*)(inbox._base + ExpectedOpenersOffset) = sources.Length;
            return inbox;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            File.Delete(path);
            return null;
        }
    }

    /// <summary>
    /// A sender mapped the inbox at <paramref name="inboxBase"/> (file <paramref name="path"/>): the last of the
    /// receiver's node-local peers to do so deletes the file, which nobody needs to open any more (the mappings stay).
    /// </summary>
    public static void CountOpener(byte* inboxBase, string path)
    {
        if (Interlocked.Increment(ref *(int*)(inboxBase + OpenersOffset)) == Volatile.Read(ref *(int*)(inboxBase + ExpectedOpenersOffset)))
        {
            File.Delete(path);
        }
    }

    /// <summary>Deletes the inbox files of processes that no longer run (a rank that died before its peers mapped its inbox).</summary>
    private static void SweepStale()
    {
        try
        {
            foreach (string stale in Directory.EnumerateFiles("/dev/shm", FilePrefix + "*"))
            {
                string name = System.IO.Path.GetFileName(stale);
                int dash = name.IndexOf('-', FilePrefix.Length);
                if (dash > 0 && int.TryParse(name.AsSpan(FilePrefix.Length, dash - FilePrefix.Length), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int pid)
                    && !Directory.Exists($"/proc/{pid}"))
                {
                    File.Delete(stale);
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Another process swept the same file, or it belongs to another user: leave it.
        }
    }

    /// <summary>The ring of <paramref name="source"/> in a mapped inbox at <paramref name="inboxBase"/>.</summary>
    public static EagerRing RingAt(byte* inboxBase, int source) => new(inboxBase + HeaderBytes + ((long)source * EagerRing.Bytes));

    /// <summary>Rings the bell of a mapped inbox at <paramref name="inboxBase"/> when a reader sleeps on it (after a full fence).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Ring(byte* inboxBase)
    {
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref *(int*)(inboxBase + 64)) != 0)
        {
            WakeSleepers(inboxBase);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void WakeSleepers(byte* inboxBase)
    {
        Interlocked.Increment(ref *(int*)inboxBase);
        Futex.Wake((int*)inboxBase, int.MaxValue);
    }

    /// <summary>Wakes a reader of this inbox that sleeps (a receive was completed by another thread).</summary>
    public void WakeIfSleeping()
    {
        if (Enter())
        {
            try
            {
                Ring(_base);
            }
            finally
            {
                Leave();
            }
        }
    }

    /// <summary>Asks the progress thread to poll (an asynchronous receive or probe waits in the mailbox).</summary>
    public void WantProgress() => _progressWanted.Set();

    /// <summary>
    /// Blocks until <paramref name="request"/> completes, polling the rings meanwhile on this thread: spins, then
    /// yields, then sleeps on the bell. <paramref name="spun"/> turns of spinning were done already (by
    /// <see cref="TryReceive"/>): it goes on from there, so a wait cut short by <see cref="CoreLoad.Oversubscribed"/>
    /// sleeps at once.
    /// </summary>
    public void Wait(ReceiveRequest request, int spun = 0)
    {
        if (!Enter())
        {
            request.SleepUntilDone();
            return;
        }
        try
        {
            WaitEntered(request, static r => r!.IsDone, null, Math.Max(0, Math.Min(spun, _spinTurns) - 1));
        }
        finally
        {
            Leave();
        }
    }

    /// <summary>
    /// Blocks a lender until <paramref name="done"/> (its message answered, or its receiver failed), polling the rings
    /// meanwhile as a receive does, so lent messages that cross each other are taken. When the first short sleep
    /// ends without an answer, calls <paramref name="stuck"/> once (the receiver may not be polling: nudge it).
    /// </summary>
    public void WaitLent(Func<bool> done, Action stuck)
    {
        if (!Enter())
        {
            while (!done())
            {
                Thread.Sleep(1); // the world is being left: the lender's receiver answers or fails soon
            }
            return;
        }
        try
        {
            WaitEntered(null, _ => done(), stuck, 0);
        }
        finally
        {
            Leave();
        }
    }

    /// <summary>The wait of <see cref="Wait"/> and <see cref="WaitLent"/>: spins, then yields, then sleeps on the bell (or on a source's connection).</summary>
    private void WaitEntered(ReceiveRequest? request, Func<ReceiveRequest?, bool> done, Action? stuck, int turns)
    {
        long start = Stopwatch.GetTimestamp();
        while (!done(request))
        {
            if (request is not null && SourceSendsCalls(request) && SleepOnCalls(request))
            {
                continue; // its source sends large messages as calls: read its connection, as a sleeping receive does
            }
            if (PollEntered() || (request is not null && PumpAnnounced(request)))
            {
                turns = 0;
                continue;
            }
            // With more threads runnable than cores, the peer may be waiting for the core this thread spins on:
            // sleep at once (its message rings the bell), as the transport's waits do.
            bool cut = ++turns == CoreLoad.ProbeTurn && turns < _spinTurns && CoreLoad.Oversubscribed;
            if (turns < _spinTurns && !cut)
            {
                Pause();
                continue;
            }
            if (turns == _spinTurns)
            {
                start = Stopwatch.GetTimestamp();
            }
            long beforeYield = Stopwatch.GetTimestamp();
            if (!cut && beforeYield - start < _yieldTicks && (_crowded || beforeYield >= Volatile.Read(ref _noYieldUntil)))
            {
                Thread.Yield();
                long afterYield = Stopwatch.GetTimestamp();
                if (_crowded || afterYield - beforeYield < s_busyYieldTicks)
                {
                    continue;
                }
                // The yield ran other threads for a while: the cores are busy, and the sender may be one of the
                // threads waiting for one. Sleep, so that its message wakes this thread (no core held meanwhile),
                // and skip yielding for a while.
                Volatile.Write(ref _noYieldUntil, afterYield + s_noYieldTicks);
            }
            if (request is null)
            {
                SleepEntered(() => done(null), stuck is null ? SleepSliceMs : LendSliceMs);
                if (stuck is not null && !done(null))
                {
                    stuck();
                    stuck = null;
                }
            }
            else if (!(SourceSendsCalls(request) && SleepOnCalls(request)))
            {
                SleepEntered(() => request.IsDone, SleepSliceMs);
            }
            turns = 0;
        }
    }

    /// <summary>
    /// A blocking receive from <paramref name="source"/> (a rank on this node) before it posts a request: spins on
    /// the source's ring, taking a small message the receive accepts straight from the ring into
    /// <paramref name="destination"/> (or one the mailbox already holds), with no request and no allocation.
    /// Spins as long as a waiting receive would before it yields, less with more threads runnable than cores
    /// (<see cref="CoreLoad.Oversubscribed"/>); on a node whose ranks outnumber its cores it then yields through the
    /// yield window too. <see cref="FastTake.Post"/> when the receive must be posted (nothing
    /// came in time, the source sends large messages as calls, or the mailbox says so).
    /// </summary>
    /// <exception cref="MessageTruncatedException">The message is longer than <paramref name="destination"/>.</exception>
    public FastTake TryReceive(int source, long context, int tag, Span<byte> destination, out MessageStatus status, out int spun)
    {
        status = default;
        spun = 0;
        if (source == _self || Array.IndexOf(_sources, source) < 0 || !Enter())
        {
            return FastTake.Post;
        }
        try
        {
            EagerRing ring = RingAt(_base, source);
            int seen = int.MinValue;
            long yieldStart = 0;
            while (true)
            {
                if (Volatile.Read(ref _largeLast[source]) || Volatile.Read(ref _largeAnnounced[source]) > Volatile.Read(ref _largeArrived[source]))
                {
                    spun = 0; // a large message comes as a call: the request path reads its connection
                    return FastTake.Post;
                }
                // A turn costs two reads while nothing comes: the ring's head and tail, and the mailbox's arrivals.
                int arrivals = _mailbox.Arrivals;
                if (arrivals != seen || ring.HasData)
                {
                    seen = arrivals;
                    FastTake taken = TakeOnce(source, context, tag, destination, out status);
                    if (taken != FastTake.None)
                    {
                        return taken;
                    }
                }
                if (++spun >= _spinTurns || (spun == CoreLoad.ProbeTurn && CoreLoad.Oversubscribed))
                {
                    if (!_crowded || YieldedLongEnough(ref yieldStart))
                    {
                        return FastTake.Post;
                    }
                    Thread.Yield(); // see _crowded
                    continue;
                }
                Pause();
            }
        }
        finally
        {
            Leave();
        }
    }

    /// <summary>Whether a crowded node's receive has yielded through its yield window (from <paramref name="yieldStart"/>, set at its first yield).</summary>
    private bool YieldedLongEnough(ref long yieldStart)
    {
        long now = Stopwatch.GetTimestamp();
        if (yieldStart == 0)
        {
            yieldStart = now;
        }
        return now - yieldStart >= _yieldTicks;
    }

    /// <summary>One try of <see cref="TryReceive"/>, holding the source's consumer flag so no record of it moves to the mailbox meanwhile.</summary>
    private FastTake TakeOnce(int source, long context, int tag, Span<byte> destination, out MessageStatus status)
    {
        status = default;
        if (Interlocked.Exchange(ref _consuming[source], 1) != 0)
        {
            return FastTake.None; // another thread moves the source's records to the mailbox: look again
        }
        try
        {
            // Messages held by the mailbox came before any in the ring (a call drains the ring first, and the
            // sender writes into the ring only once its calls arrived).
            int arrivals = _mailbox.Arrivals;
            FastTake held = _mailbox.TryTakeHeld(source, context, tag, destination, out status);
            if (held != FastTake.None)
            {
                return held;
            }
            EagerRing ring = RingAt(_base, source);
            while (ring.TryPeek(out long recordContext, out int recordTag, out ReadOnlySpan<byte> payload, out long next))
            {
                bool accepted = recordTag >= 0 && recordContext == context && (tag == Communicator.AnyTag || tag == recordTag);
                if (accepted && payload.Length <= destination.Length)
                {
                    // A call's message can reach the mailbox while this thread holds the flag: its call drained the
                    // ring before the flag was taken and adds the message after. The sender wrote this record only
                    // once that call had arrived, so whatever the mailbox got meanwhile comes first.
                    if (_mailbox.Arrivals != arrivals)
                    {
                        arrivals = _mailbox.Arrivals;
                        held = _mailbox.TryTakeHeld(source, context, tag, destination, out status);
                        if (held != FastTake.None)
                        {
                            return held;
                        }
                    }
                    payload.CopyTo(destination);
                    _largeLast[source] = false;
                    ring.Release(next);
                    status = new MessageStatus(source, recordTag, payload.Length);
                    return FastTake.Taken;
                }
                DeliverRecord(source, recordContext, recordTag, payload);
                ring.Release(next);
                if (accepted || recordTag < 0)
                {
                    return FastTake.Post; // too long, lent or announcing a call: the request path takes it in order
                }
            }
            return FastTake.None;
        }
        finally
        {
            Volatile.Write(ref _consuming[source], 0);
        }
    }

    /// <summary>Whether the one source <paramref name="request"/> accepts last sent a large message as a call.</summary>
    private bool SourceSendsCalls(ReceiveRequest request) =>
        request.Source != Communicator.AnySource && Volatile.Read(ref _largeLast[request.Source]);

    /// <summary>Delivers every record waiting in the rings to the mailbox (rings another thread polls are left to it); true when one was.</summary>
    public bool Poll()
    {
        if (!Enter())
        {
            return false;
        }
        try
        {
            return PollEntered();
        }
        finally
        {
            Leave();
        }
    }

    /// <summary>Delivers every record waiting in <paramref name="source"/>'s ring, waiting for a thread that polls it to finish first.</summary>
    public void Drain(int source)
    {
        if (source == _self || (uint)source >= (uint)_consuming.Length || !Enter())
        {
            return;
        }
        try
        {
            var spin = new SpinWait();
            while (Interlocked.Exchange(ref _consuming[source], 1) != 0)
            {
                spin.SpinOnce(sleep1Threshold: -1);
            }
            try
            {
                DrainUnsynchronized(source);
            }
            finally
            {
                Volatile.Write(ref _consuming[source], 0);
            }
        }
        finally
        {
            Leave();
        }
    }

    /// <summary>Counts a large message of <paramref name="source"/> that arrived as a call (announced or not).</summary>
    public void LargeArrived(int source)
    {
        if ((uint)source < (uint)_largeArrived.Length)
        {
            Interlocked.Increment(ref _largeArrived[source]);
            Volatile.Write(ref _largeLast[source], true);
        }
    }

    /// <summary>
    /// A large message was announced and has not arrived: reads the connection it comes over on this thread until it
    /// has (or the request completed), so its call runs here with no wake-up. False when none waits or its
    /// connection is not known yet or another thread reads it (that thread then runs the call).
    /// </summary>
    private bool PumpAnnounced(ReceiveRequest request)
    {
        foreach (int source in _sources)
        {
            long announced = Volatile.Read(ref _largeAnnounced[source]);
            if (announced > Volatile.Read(ref _largeArrived[source]) && announced > _largePumped[source]
                && _mailbox.LinkFor(source) is { } link && !ReferenceEquals(Runtime.XCallConnection.Current, link))
            {
                _largePumped[source] = announced; // one try per announced message: when another thread reads the connection, it runs the call
                int from = source;
                return link.WaitReceiving(new LargeArrival(request, () => Volatile.Read(ref _largeArrived[from]) >= announced), s_pumpTimeout);
            }
        }
        return false;
    }

    /// <summary>A small message of <paramref name="source"/> came as a call: receives from it poll the inbox again.</summary>
    public void SmallArrived(int source)
    {
        if ((uint)source < (uint)_largeLast.Length)
        {
            Volatile.Write(ref _largeLast[source], false);
        }
    }

    /// <summary>Counts a message of <paramref name="source"/> that came as a call, once the mailbox holds it (see <see cref="EagerRing"/>).</summary>
    public void CountDelivered(int source)
    {
        if (source != _self && (uint)source < (uint)_consuming.Length && Enter())
        {
            try
            {
                RingAt(_base, source).CountDelivered();
            }
            finally
            {
                Leave();
            }
        }
    }

    private bool PollEntered()
    {
        bool delivered = false;
        foreach (int source in _sources)
        {
            EagerRing ring = RingAt(_base, source);
            if (ring.HasData && Interlocked.Exchange(ref _consuming[source], 1) == 0)
            {
                try
                {
                    delivered |= DrainUnsynchronized(source);
                }
                finally
                {
                    Volatile.Write(ref _consuming[source], 0);
                }
            }
        }
        return delivered;
    }

    /// <summary>Delivers the records of <paramref name="source"/>'s ring (its consumer flag held).</summary>
    private bool DrainUnsynchronized(int source)
    {
        EagerRing ring = RingAt(_base, source);
        bool delivered = false;
        while (ring.TryPeek(out long context, out int tag, out ReadOnlySpan<byte> payload, out long next))
        {
            delivered |= DeliverRecord(source, context, tag, payload);
            ring.Release(next);
        }
        return delivered;
    }

    /// <summary>Delivers one record of <paramref name="source"/>'s ring (its consumer flag held, the record not yet released); true when the mailbox got a message.</summary>
    private bool DeliverRecord(int source, long context, int tag, ReadOnlySpan<byte> payload)
    {
        if (tag == EagerRing.LargeMarkerTag)
        {
            Volatile.Write(ref _largeAnnounced[source], context); // the marker's context is the large message's number
            return false;
        }
        _largeLast[source] = false;
        if (tag == EagerRing.LendTag)
        {
            LentMessage lent = LentMessage.Read(payload);
            if (CanRead(source, lent))
            {
                _mailbox.ArriveLent(source, context, lent);
                return true;
            }
            AnswerEntered(source, lent.Number, LentAnswer.Refused);
            return false;
        }
        _mailbox.ArriveEager(source, context, tag, payload);
        return true;
    }

    /// <summary>Whether this process can read <paramref name="source"/>'s lent messages: tried once per source, with the first bytes of one.</summary>
    private bool CanRead(int source, LentMessage lent)
    {
        int known = Volatile.Read(ref _readable[source]);
        if (known != 0)
        {
            return known == 1;
        }
        Span<byte> first = stackalloc byte[8];
        first = first[..Math.Min(first.Length, lent.Length)];
        bool readable = ProcessMemory.TryRead(lent.Pid, lent.Address, first, out int error);
        if (readable || error != ProcessMemory.NoSuchProcess)
        {
            Volatile.Write(ref _readable[source], readable ? 1 : 2); // a sender that is gone decides nothing
        }
        return readable;
    }

    /// <summary>Tells <paramref name="source"/> that a receive starts copying its lent message <paramref name="number"/> (see <see cref="EagerRing.Claim"/>).</summary>
    public void Claim(int source, long number)
    {
        if (source != _self && (uint)source < (uint)_consuming.Length && Enter())
        {
            try
            {
                RingAt(_base, source).Claim(number);
            }
            finally
            {
                Leave();
            }
        }
    }

    /// <summary>Answers <paramref name="source"/>'s lent message <paramref name="number"/> and rings its bell.</summary>
    public void Answer(int source, long number, LentAnswer answer)
    {
        if (source != _self && (uint)source < (uint)_consuming.Length && Enter())
        {
            try
            {
                AnswerEntered(source, number, answer);
            }
            finally
            {
                Leave();
            }
        }
    }

    private void AnswerEntered(int source, long number, LentAnswer answer)
    {
        RingAt(_base, source).Answer(number, answer);
        _wakeSender(source);
    }

    /// <summary>
    /// A receive from one node-local source whose calls' connection is known sleeps reading that connection
    /// (<see cref="Runtime.XCallConnection.WaitReceiving(Transport.IReplyWait, TimeSpan)"/>): the source's messages go as calls meanwhile (its ring
    /// says so), so a large message, which is a call anyway, wakes it once and runs on this thread. False when the
    /// receive is not such a one.
    /// </summary>
    private bool SleepOnCalls(ReceiveRequest request)
    {
        int source = request.Source;
        if (source == Communicator.AnySource || _mailbox.LinkFor(source) is not { } link || ReferenceEquals(Runtime.XCallConnection.Current, link))
        {
            return false;
        }
        EagerRing ring = RingAt(_base, source);
        CallSleeps++;
        ring.SetReaderInCalls(true);
        try
        {
            if (!PollEntered() && !request.IsDone)
            {
                link.WaitReceiving(request, s_callSleep);
            }
        }
        finally
        {
            ring.SetReaderInCalls(false);
        }
        return true;
    }

    /// <summary>Sleeps on the bell until a sender rings it (or <paramref name="sliceMs"/> pass), unless a record or <paramref name="done"/> comes first.</summary>
    private void SleepEntered(Func<bool> done, int sliceMs)
    {
        int* sleepers = (int*)(_base + 64);
        Interlocked.Increment(ref *sleepers);
        try
        {
            int seq = Volatile.Read(ref *(int*)_base);
            if (done() || PollEntered())
            {
                return;
            }
            Futex.Wait((int*)_base, seq, sliceMs);
        }
        finally
        {
            Interlocked.Decrement(ref *sleepers);
        }
    }

    private void ProgressLoop()
    {
        while (!_disposed)
        {
            _progressWanted.Reset();
            if (!_mailbox.HasAsyncWaiters)
            {
                _progressWanted.Wait();
                continue;
            }
            if (!Enter())
            {
                return;
            }
            try
            {
                if (!PollEntered())
                {
                    SleepEntered(() => _disposed || !_mailbox.HasAsyncWaiters, SleepSliceMs);
                }
            }
            finally
            {
                Leave();
            }
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Pause()
    {
        if (System.Runtime.Intrinsics.X86.X86Base.IsSupported)
        {
            System.Runtime.Intrinsics.X86.X86Base.Pause();
        }
        else
        {
            Thread.SpinWait(1);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool Enter()
    {
        Interlocked.Increment(ref _users);
        if (_disposed)
        {
            Interlocked.Decrement(ref _users);
            return false;
        }
        return true;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Leave() => Interlocked.Decrement(ref _users);

    /// <summary>Stops the progress thread, waits for every user of the mapping to leave, unmaps and deletes the file.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        _progressWanted.Set();
        WakeSleepers(_base);
        var spin = new SpinWait();
        while (Volatile.Read(ref _users) != 0)
        {
            spin.SpinOnce();
        }
        _progress.Join();
        _view.SafeMemoryMappedViewHandle.ReleasePointer();
        _view.Dispose();
        _file.Dispose();
        File.Delete(Path);
    }
}
