using System.Diagnostics;
using System.Runtime.CompilerServices;
using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm;

// Design: the receiver role. Exactly one thread at a time polls the incoming ring: the owner recorded in
// _roleOwner (a managed thread id; 0 = free; -1 = closed for good), taken and released with interlocked
// operations (full fences). The receive thread holds it by default. A caller waiting for its reply takes
// it when it is free (or asks the receive thread for it through _roleWanted; the receive thread lets go
// the next time it finds the ring empty) and polls on its own thread: the reply is handled there, with no
// thread hop and no wake-up on either side.
//
// A caller that finds the role held by another caller yields to it (it reads this caller's reply too), up to the idle
// strategy's yields and at most BesideReaderBound, taking the role if it frees, before blocking on its call; one that
// finds the receive thread polling, or waits for any frame (pollsAll), blocks at once: the receive thread wakes it, and
// yields to threads of a foreign load could cost it their time slices.
//
// A caller that spun without its reply arriving sleeps on the ring itself (armed with the "leader" value,
// so the peer wakes the leader futex word, not the receive thread), in short slices, for a bounded time;
// then it gives the role back and blocks on the call.
//
// How long a wait spins before it sleeps is IdleSpinner's: a budget learned per site (_callerSpins for callers,
// _receiveSpins for the receive thread). The receive thread's spin is cut short, without yields, when half a thread
// beyond the cores wants them (CoreDemand.Oversubscribed): then a caller of its process may be waiting for the very
// core it holds. A synchronous caller's spin is never cut, an asynchronous one's as a writer's is, at one thread beyond
// the cores (IdleSpinner's design notes say why). A caller does not ask for the hand-over when more than one thread
// beyond the cores wants them (CoreDemand.OversubscribedByAThread): the receive thread, asked, lets go and sleeps, and
// an asker that then waits for a core leaves the ring unpolled; the receive thread reads its reply instead. Only when a
// thread sleeps changes, never who reads what: the wake-up protocol below is the same.
//
// The receive thread sleeps in two ways:
// (A) on the ring's futex, armed (the peer wakes it when it publishes), after releasing the role. It sets
//     _rtSleeping first; a caller that then takes the role marks the ring "callers poll" (the peer need not
//     wake anybody for what the caller polls for; see below) and, when it gives the role back while
//     _rtSleeping is still set, either leaves the mark (below) or re-arms the ring and re-checks it (arming
//     is a full fence), handling anything that arrived meanwhile, all while it still holds the role, so it
//     never touches shared memory after letting go.
// (B) on a local semaphore, when it finds the role taken by a caller: it sets _rtBlocked, fences and
//     re-checks the role; the caller that releases the role clears _rtBlocked and releases the semaphore.
// Both checks are Dekker pairs (store flag, fence, load the other side's word), so no wake-up is lost.
//
// Re-arming in (A) is an interlocked write to a word the peer read when it published the reply: its cache line
// comes back across cores, on the round trip's critical path, call after call. So a caller that takes the role
// while the receive thread sleeps marks the word "callers poll" (3, RingSignal.MarkCallerPolls; written only if it
// says something else) instead of clearing it: the peer then wakes nobody for a reply, an error or a call nested in
// one of our calls, and the receive thread for anything else. A caller that gives the role back when every call and
// hello this side sent has its answer read (_callsSent = RingReader.Answers) and the mark still holds leaves the
// ring so: no answer is owed, and anything else wakes the receive thread. So does a caller that lets go only to run
// a call nested in its own (IReplyWait.WaitsAgain) when its own call is the one answer owed: it polls for that answer
// again once the nested call returns (or, finding the role taken, asks for it or waits for whoever polls).
// Re-arming there would cost each callback a write to the word the peer reads, and now and then an answer that wakes
// the receive thread, which then holds the role the caller asks back. A caller whose call ends while it runs the
// nested call (a cancel) does not poll again: its next wait, finding the call over, re-arms the ring
// (RearmIfLeftOwing). A call that goes out meanwhile is seen by one of two checks: its caller takes the role
// afterwards (sync calls, and async calls that poll), or the releaser, after letting go (a full fence), reads
// _callsSent again and then takes the role and re-arms; the sender counts the call before its frame's publish (a
// full fence) and reads the role after, so one of them sees the other. A pipelined async call, whose caller reads no
// role, re-arms itself when it finds the role free and the mark set (CommitFrameBatched). Calls a peer never answers
// only keep the mark from being left. A long wait (FrameFlags.LongWait: a call nobody polls for, whose answer may come
// much later, such as a buffered channel writer's standing request for credits) is not counted as owed: its answer
// echoes the flag, and the peer wakes the receive thread for it under the mark as for any frame nobody polls for.
//
// A wait for a condition that any frame may end (WaitReceiving: a message that a one-way call delivers) takes the role
// the same way, but disarms the word instead of marking it: while it polls, the peer wakes nobody for any frame. It
// gives the role back through RearmAndLetGo (never leaving the ring marked): what arrives later is the receive
// thread's again.
internal sealed partial class ShmChannel
{
    private const int RoleFree = 0;
    private const int RoleClosed = -1;
    private const int HandOverSpins = 1000; // CPU pauses: the receive thread lets go within one idle turn, well inside them
    private const int HandOverYieldEvery = 128; // pauses of a hand-over's wait between two yields of the core (TryTakeRole)
    private const int LeaderSleepSliceMs = 20;
    private const int LeaderSleepBudgetMs = 200;

    // A waiter that comes back (a channel's reader, IReplyWait.ComesBack) sleeps on the ring this long at most, in one
    // slice: an idle reader then leaves the ring to the receive thread soon, for frames of other calls it would read only
    // to queue them on the pool.
    private const int ComesBackSleepBudgetMs = 2;
    private const int DrainLimit = 64;
    private const int AsyncPollTurns = 3000; // an async call polls at most this many times (as many as Adaptive spins), whatever the strategy or traffic

    private readonly SemaphoreSlim _roleReleased = new(0);
    private int _roleOwner;
    private int _roleWanted;
    private int _rtSleeping;
    private int _rtBlocked;
    private int _receiveThreadId;
    private long _releasesLeftMarked; // by the role's holder
    private readonly SpinTuner _callerSpins = new(); // callers polling for their replies
    private readonly SpinTuner _receiveSpins = new(); // the receive thread between frames

    private long _leaderSleeps; // by the role's holder
    private bool _tookLentRing; // by the role's holder: it ended a lend when it took the role (see ShmChannel.Lend.cs)
    private long _roleWaits; // by the receive thread
    private long _handOverAsks; // by callers
    private long _waitsEndedBeside; // by callers

    /// <summary>Tests: how many callers' waits ended while they yielded beside another caller that read the ring.</summary>
    internal long WaitsEndedBeside => Volatile.Read(ref _waitsEndedBeside);

    /// <summary>Tests: how many times a caller polling for its reply slept on the ring (the leader futex).</summary>
    internal long LeaderSleeps => Volatile.Read(ref _leaderSleeps);

    /// <summary>Tests: the managed thread id of the thread that reads the incoming ring (0: nobody).</summary>
    internal int RoleOwner => Volatile.Read(ref _roleOwner);

    /// <summary>Diagnostics: how many times the receive thread found the role taken and went to wait for it (state B, and at close).</summary>
    internal long RoleWaits => Volatile.Read(ref _roleWaits);

    /// <summary>Diagnostics: how many times a caller asked the receive thread to hand the role over.</summary>
    internal long HandOverAsks => Volatile.Read(ref _handOverAsks);

    /// <summary>Tests: the receive thread sleeps on the ring (state A).</summary>
    internal bool ReceiveThreadSleeps => Volatile.Read(ref _rtSleeping) != 0;

    /// <summary>Tests: the incoming ring's consumer wake sequence, which every wake-up of the receive thread counts up.</summary>
    internal int ReceiveThreadWakeSeq => _inSignal.ConsumerSeq;

    /// <summary>Tests: how many times a caller gave the role back leaving the ring marked for callers (not re-armed).</summary>
    internal long ReleasesLeftMarked => Volatile.Read(ref _releasesLeftMarked);

    private enum PumpOutcome
    {
        Completed,
        TimedOut,
        GaveUp,
    }

    /// <inheritdoc/>
    public override bool WaitForReply(IReplyWait call, long deadline) => Wait(call, deadline, pollsAll: false);

    /// <inheritdoc/>
    public override bool WaitReceiving(IReplyWait condition, long deadline) => Wait(condition, deadline, pollsAll: true);

    /// <summary>A caller's wait: polls the ring on its thread when it can. <paramref name="pollsAll"/>: any frame may end
    /// the wait, so while this thread polls the peer wakes nobody (the ring is disarmed, not marked for callers), and
    /// the ring is re-armed for the receive thread when the wait ends.</summary>
    private bool Wait(IReplyWait call, long deadline, bool pollsAll)
    {
        if (call.WaitOver)
        {
            RearmIfLeftOwing();
            return true;
        }
        if (RunsDetached)
        {
            return WaitDetached(call, deadline);
        }
        // A call nested in a call this connection dispatched on the pool (a callback) polls the ring only when
        // nobody does; it does not ask the receive thread to hand it over: that often fails on a machine whose
        // cores are all busy (the receive thread is not running), and then costs a kernel wake-up, while the
        // receive thread, polling anyway, reads the reply.
        bool nested = call.IsNested;
        PumpOutcome outcome;
        long yieldingSince = 0;
        for (int yields = 0; !TryPumpAsReceiver(call, deadline, maySleep: true, out outcome, mayAskHandOver: !nested && yields == 0, pollsAll); )
        {
            // Another caller reads the ring and completes this call when its reply comes: yield to it a while, taking
            // the role if it frees, then block on the call. A wait that any frame may end (a channel's reader, which
            // may wait long) blocks at once.
            if (pollsAll || !YieldBesideReader(call, deadline, ref yields, ref yieldingSince))
            {
                return call.Wait(deadline);
            }
            if (call.WaitOver)
            {
                _waitsEndedBeside++; // a diagnostic: racing callers may lose a count
                RearmIfLeftOwing();
                return true;
            }
        }
        return outcome switch
        {
            PumpOutcome.Completed => true,
            PumpOutcome.TimedOut => call.IsCompleted,
            _ => call.Wait(deadline),
        };
    }

    /// <summary>
    /// A caller's wait while another caller holds the role: yields until the call is over or the role is free (true), or
    /// false once the idle strategy's yields or <see cref="BesideReaderBound"/> are spent, the deadline passed, or the
    /// receive thread (which wakes the caller) or this thread itself holds the role. Blocking at once would cost each
    /// such call two thread switches and a kernel wake-up by the reader; threads that share a connection yield to each
    /// other instead, and whichever runs completes the others' calls as it reads (docs/remoting.md, "Wake-ups").
    /// </summary>
    private bool YieldBesideReader(IReplyWait call, long deadline, ref int yields, ref long yieldingSince)
    {
        int most = _options.IdleStrategy == ShmIdleStrategy.Blocking ? 0 : IdleSpinner.BesideReaderYields;
        while (yields < most)
        {
            int owner = Volatile.Read(ref _roleOwner);
            if (call.WaitOver)
            {
                return true;
            }
            if (owner == _receiveThreadId || owner == RoleClosed || owner == Environment.CurrentManagedThreadId)
            {
                return false;
            }
            // A yield on cores busy with other work can give away a whole time slice: the phase is bounded in time too.
            long now = Stopwatch.GetTimestamp();
            if (yieldingSince == 0)
            {
                yieldingSince = now;
            }
            else if (now - yieldingSince > s_besideReaderBoundTicks || (deadline != long.MaxValue && Environment.TickCount64 >= deadline))
            {
                return false;
            }
            yields++; // a free role counts too: a wait that cannot take it (the channel stops) ends all the same
            if (owner == RoleFree)
            {
                return true;
            }
            Thread.Yield();
        }
        return false;
    }

    /// <summary>The longest a caller yields beside another caller that reads the ring before it blocks on its call.</summary>
    internal static readonly TimeSpan BesideReaderBound = TimeSpan.FromMilliseconds(1);

    private static readonly long s_besideReaderBoundTicks = (long)(BesideReaderBound.TotalSeconds * Stopwatch.Frequency);

    /// <inheritdoc/>
    public override bool TryPollForReply(IReplyWait call) =>
        call.IsCompleted || (TryPumpAsReceiver(call, long.MaxValue, maySleep: false, out PumpOutcome outcome) && outcome == PumpOutcome.Completed);

    /// <summary>Takes the receiver role and polls for <paramref name="call"/>'s reply on this thread; false when the
    /// role cannot be had (the channel stops, another caller polls, or this thread is inside a frame it polled).</summary>
    private bool TryPumpAsReceiver(IReplyWait call, long deadline, bool maySleep, out PumpOutcome outcome, bool mayAskHandOver = true, bool pollsAll = false)
    {
        outcome = PumpOutcome.GaveUp;
        IFrameHandler? handler = Volatile.Read(ref _handler);
        if (handler is null || Volatile.Read(ref _stopping) != 0 || !TryTakeRole(Environment.CurrentManagedThreadId, call, mayAskHandOver, pollsAll))
        {
            return false;
        }
        try
        {
            outcome = Pump(call, deadline, handler, maySleep, pollsAll);
        }
        finally
        {
            if (pollsAll)
            {
                // Frames no reply-waiter polls for are due to the receive thread again, unless the waiter comes back soon.
                if (outcome == PumpOutcome.Completed && call.ComesBack)
                {
                    LendOrRearmAndLetGo(handler);
                }
                else
                {
                    RearmAndLetGo(handler);
                }
            }
            else
            {
                ReleaseRole(handler, ownReplyOwed: outcome == PumpOutcome.Completed && call.WaitsAgain);
            }
        }
        return true;
    }

    private bool TryTakeRole(int me, IReplyWait call, bool mayAskHandOver, bool pollsAll)
    {
        int owner = Volatile.Read(ref _roleOwner);
        if (owner == RoleFree)
        {
            return TryTakeFreeRole(me, pollsAll);
        }
        if (!mayAskHandOver || owner != _receiveThreadId || owner == me)
        {
            // Another caller polls (it handles our reply too), or the channel closes, or this thread is
            // inside a frame it polled (a nested call from a handler): it cannot poll again until it returns;
            // or a nested call of a pool-dispatched call, which leaves the ring to the receive thread.
            return false;
        }
        if (CoreDemand.OversubscribedByAThread)
        {
            // The receive thread lets go when asked, and sleeps: on oversubscribed cores the asker may not get the
            // role within its spin either, and then nobody polls. The receive thread reads the reply.
            return false;
        }
        Interlocked.Increment(ref _roleWanted);
        Interlocked.Increment(ref _handOverAsks);
        try
        {
            for (int i = 0; i < HandOverSpins; i++)
            {
                owner = Volatile.Read(ref _roleOwner);
                if (owner == RoleFree)
                {
                    return TryTakeFreeRole(me, pollsAll);
                }
                if (owner != _receiveThreadId || call.WaitOver)
                {
                    return false;
                }
                if (i != 0 && i % HandOverYieldEvery == 0)
                {
                    // The receive thread lets go only when it runs and finds the ring empty; one that has not within these
                    // pauses may be waiting for this very core (and while it keeps the role it reads the frames this
                    // thread waits for, and wakes it for each, frame after frame): offer it the core.
                    Thread.Yield();
                }
                else
                {
                    IdleSpinner.Pause();
                }
            }
            return false;
        }
        finally
        {
            Interlocked.Decrement(ref _roleWanted);
        }
    }

    /// <summary>Takes the free role; while the receive thread sleeps, marks the ring for callers (the peer wakes nobody for
    /// a reply) or, with <paramref name="pollsAll"/>, disarms it (the peer wakes nobody for any frame).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryTakeFreeRole(int me, bool pollsAll = false)
    {
        if (Interlocked.CompareExchange(ref _roleOwner, me, RoleFree) != RoleFree)
        {
            return false;
        }
        if (EndLend())
        {
            _tookLentRing = true;
        }
        if (Volatile.Read(ref _rtSleeping) != 0)
        {
            if (pollsAll)
            {
                _inSignal.DisarmConsumerIfArmed();
            }
            else
            {
                _inSignal.MarkCallerPolls();
            }
        }
        return true;
    }

    /// <summary>Polls until the call completes, the deadline passes, the channel stops, or the caller waited
    /// long enough (then it blocks on the call instead). Without <paramref name="maySleep"/> (an async call)
    /// it gives up once the idle strategy's spinning and yielding are spent, instead of sleeping on the ring.</summary>
    private PumpOutcome Pump(IReplyWait call, long deadline, IFrameHandler handler, bool maySleep, bool pollsAll)
    {
        // An asynchronous call's poll and a wait for any frame (a channel operation's) have a peer that spins too: they
        // yield amid a long spin (IdleSpinner's design notes).
        var spinner = new IdleSpinner(_callerSpins, maySleep ? SpinCut.Never : SpinCut.ByAThread, yieldsAmidSpin: pollsAll || !maySleep);
        ShmIdleStrategy strategy = _options.IdleStrategy;
        int turns = 0;
        long sleepingSince = 0;
        int polls = 0;
        while (!call.WaitOver)
        {
            if (Volatile.Read(ref _stopping) != 0 || (!maySleep && ++polls > AsyncPollTurns))
            {
                return PumpOutcome.GaveUp;
            }
            PollResult result;
            try
            {
                result = _reader.Poll(handler);
            }
            catch (Exception ex)
            {
                RequestStop(StopKind.Fault, ex);
                return PumpOutcome.GaveUp;
            }
            if (result is not (PollResult.Empty or PollResult.Held))
            {
                if (result == PollResult.Goodbye)
                {
                    RequestStop(StopKind.Goodbye, null);
                    return PumpOutcome.GaveUp;
                }
                spinner.Reset();
                continue;
            }
            if ((++turns & 255) == 0 && deadline != long.MaxValue && Environment.TickCount64 >= deadline)
            {
                return PumpOutcome.TimedOut;
            }
            if (result == PollResult.Held)
            {
                // Published by its writer or taken by this reader within HeldClaimDelay: no reason to sleep, nor to arm
                // the ring (the writer would see it armed and issue a wake-up for nobody).
                IdleSpinner.Pause();
                continue;
            }
            if (spinner.SpinOnce(strategy))
            {
                continue;
            }
            if (!maySleep)
            {
                return PumpOutcome.GaveUp;
            }

            // Spun long enough: sleep on the ring ourselves, so the reply costs one wake-up (the peer wakes
            // us) instead of two (the peer wakes the receive thread, which wakes us). In slices, so that a
            // call completed by another thread (cancel, timeout, close) is noticed; after a while, hand the
            // role back and block on the call like any other waiter.
            long now = Environment.TickCount64;
            int budget = call.ComesBack ? ComesBackSleepBudgetMs : LeaderSleepBudgetMs;
            if (sleepingSince == 0)
            {
                sleepingSince = now;
            }
            else if (now - sleepingSince >= budget)
            {
                return PumpOutcome.GaveUp;
            }
            if (deadline != long.MaxValue && now >= deadline)
            {
                return PumpOutcome.TimedOut;
            }
            int slice = (int)Math.Clamp(deadline == long.MaxValue ? LeaderSleepSliceMs : deadline - now, 1, Math.Min(budget, LeaderSleepSliceMs));
            int seq = _inSignal.LeaderSeq;
            _inSignal.ArmLeader();
            if (!_reader.HasData && !call.WaitOver && Volatile.Read(ref _stopping) == 0)
            {
                long asleep = Stopwatch.GetTimestamp();
                Volatile.Write(ref _leaderSleeps, _leaderSleeps + 1);
                _inSignal.WaitLeader(seq, slice);
                _callerSpins.Woke((long)Stopwatch.GetElapsedTime(asleep).TotalNanoseconds);
            }
            _inSignal.DisarmConsumer();
            spinner.Restart();
        }
        return PumpOutcome.Completed;
    }

    /// <summary>A caller gives the role back (it holds it); <paramref name="ownReplyOwed"/>: its call is unanswered, and it
    /// polls for the reply again after running a call nested in it (<see cref="IReplyWait.WaitsAgain"/>).</summary>
    private void ReleaseRole(IFrameHandler handler, bool ownReplyOwed = false)
    {
        long sent = Volatile.Read(ref _callsSent);
        // A holder that ended a lend may leave frames in the ring that came while it was disarmed and woke nobody: the
        // mark would not get them read (the peer wakes for frames published after it), so it re-arms and drains them.
        bool tookLent = _tookLentRing;
        _tookLentRing = false;
        if (!(tookLent && _reader.HasData) && sent == _reader.Answers + (ownReplyOwed ? 1 : 0) && Volatile.Read(ref _stopping) == 0 && Volatile.Read(ref _rtSleeping) != 0 && _inSignal.IsMarkedCallerPolls)
        {
            // Every call of ours is answered (but this caller's own, when it polls for that answer again once it ran a
            // call nested in it), and the peer wakes the receive thread for anything else while the mark holds: leave
            // the ring as it is (no write to the word the peer reads after each frame).
            _releasesLeftMarked++;
            LetGoOfRole();
            if (Volatile.Read(ref _callsSent) != sent && TryTakeFreeRole(Environment.CurrentManagedThreadId))
            {
                // A call went out meanwhile, and its caller may have found the role taken: re-arm for its reply.
                RearmAndLetGo(handler);
            }
            return;
        }
        RearmAndLetGo(handler); // re-arms only while the receive thread sleeps and the channel runs
    }

    /// <summary>
    /// A caller that let the role go to run a call nested in its own, leaving the ring marked while its answer was owed,
    /// may find its call ended meanwhile (cancelled, failed) and not poll again: then the ring must not stay marked, or
    /// what the peer still sends for that call (another nested call, the answer) wakes nobody. When the ring is marked,
    /// the receive thread sleeps and an answer is owed, the role is taken (if free) and given back re-armed.
    /// </summary>
    private void RearmIfLeftOwing()
    {
        if (Volatile.Read(ref _rtSleeping) != 0 && _inSignal.IsMarkedCallerPolls && Volatile.Read(ref _callsSent) != _reader.Answers
            && Volatile.Read(ref _handler) is { } handler && Volatile.Read(ref _stopping) == 0 && TryTakeFreeRole(Environment.CurrentManagedThreadId))
        {
            ReleaseRole(handler); // an answer is owed: re-arms
        }
    }

    /// <summary>The holder of the role re-arms the ring for the sleeping receive thread, handles what slipped in,
    /// and gives the role back.</summary>
    private void RearmAndLetGo(IFrameHandler handler)
    {
        if (Volatile.Read(ref _stopping) == 0 && Volatile.Read(ref _rtSleeping) != 0)
        {
            // The receive thread sleeps on the ring, which callers marked (or a leader's sleep disarmed): re-arm,
            // and handle what slipped in.
            for (int handled = 0; ; )
            {
                _inSignal.ArmConsumer();
                if (!_reader.HasData)
                {
                    break;
                }
                _inSignal.DisarmConsumer();
                if (handled >= DrainLimit)
                {
                    _inSignal.WakeConsumer(remote: false); // a flood: let the receive thread take over
                    break;
                }
                try
                {
                    PollResult result;
                    while (handled < DrainLimit && (result = _reader.Poll(handler)) != PollResult.Empty)
                    {
                        if (result == PollResult.Held)
                        {
                            IdleSpinner.Pause(); // published or taken within HeldClaimDelay
                            continue;
                        }
                        handled++;
                        if (result == PollResult.Goodbye)
                        {
                            RequestStop(StopKind.Goodbye, null);
                            break;
                        }
                    }
                }
                catch (Exception ex)
                {
                    RequestStop(StopKind.Fault, ex);
                }
                if (Volatile.Read(ref _stopping) != 0)
                {
                    break;
                }
            }
        }
        LetGoOfRole();
    }

    private void LetGoOfRole()
    {
        Interlocked.Exchange(ref _roleOwner, RoleFree);
        if (Volatile.Read(ref _rtBlocked) != 0 && Interlocked.Exchange(ref _rtBlocked, 0) != 0)
        {
            _roleReleased.Release();
        }
    }

    private void ReceiveLoop() => ReceiveLoop(holdsRole: false);

    /// <summary>The receive thread's loop; <paramref name="holdsRole"/>: a thread the receiving was handed to (see ShmChannel.Detach.cs).</summary>
    private void ReceiveLoop(bool holdsRole)
    {
        IFrameHandler handler = _handler!;
        int me = Environment.CurrentManagedThreadId;
        ShmIdleStrategy strategy = _options.IdleStrategy;
        try
        {
            if (holdsRole && Volatile.Read(ref _stopping) != 0)
            {
                Interlocked.Exchange(ref _roleOwner, RoleFree);
            }
            while (Volatile.Read(ref _stopping) == 0)
            {
                if (!holdsRole && Interlocked.CompareExchange(ref _roleOwner, me, RoleFree) != RoleFree)
                {
                    WaitForRoleRelease();
                    continue;
                }
                holdsRole = false;
                EndLend();
                var spinner = new IdleSpinner(_receiveSpins, SpinCut.ByHalfAThread);
                bool sleep = false;
                while (Volatile.Read(ref _stopping) == 0)
                {
                    PollResult result;
                    try
                    {
                        result = _reader.Poll(handler);
                    }
                    catch (Exception ex)
                    {
                        RequestStop(StopKind.Fault, ex);
                        if (_detached is { RunsHere: true } detached && !detached.End())
                        {
                            return; // thrown out of a detached frame that was handed over
                        }
                        break;
                    }
                    if (result is not (PollResult.Empty or PollResult.Held))
                    {
                        if (result == PollResult.Goodbye)
                        {
                            RequestStop(StopKind.Goodbye, null);
                            break;
                        }
                        if (result == PollResult.Detached && !Detached.End())
                        {
                            return; // the receiving was handed to a new thread, which also finishes the close
                        }
                        spinner.Reset();
                        continue;
                    }
                    if (Volatile.Read(ref _roleWanted) != 0)
                    {
                        sleep = true;
                        break;
                    }
                    if (result == PollResult.Held)
                    {
                        IdleSpinner.Pause(); // published or taken within HeldClaimDelay: neither sleep nor arm for it
                        continue;
                    }
                    if (!spinner.SpinOnce(strategy))
                    {
                        sleep = true;
                        break;
                    }
                }
                if (sleep)
                {
                    SleepOnRing();
                }
                else
                {
                    Interlocked.Exchange(ref _roleOwner, RoleFree);
                }
            }
        }
        catch (Exception ex)
        {
            RequestStop(StopKind.Fault, ex);
            Interlocked.CompareExchange(ref _roleOwner, RoleFree, me);
        }
        FinishClose(handler);
    }

    /// <summary>The receive thread, holding the role, found nothing to do: state (A).</summary>
    private void SleepOnRing()
    {
        int seq = _inSignal.ConsumerSeq;
        Volatile.Write(ref _rtSleeping, 1);
        _inSignal.ArmConsumer();
        if (_reader.HasData || Volatile.Read(ref _stopping) != 0)
        {
            _inSignal.DisarmConsumer();
            Volatile.Write(ref _rtSleeping, 0);
            Interlocked.Exchange(ref _roleOwner, RoleFree);
            return;
        }
        Interlocked.Exchange(ref _roleOwner, RoleFree); // callers may poll while we sleep
        long asleep = Stopwatch.GetTimestamp();
        _inSignal.WaitConsumer(seq);
        Volatile.Write(ref _rtSleeping, 0);
        _receiveSpins.Woke((long)Stopwatch.GetElapsedTime(asleep).TotalNanoseconds);
    }

    /// <summary>The receive thread found the role taken by a caller: state (B).</summary>
    private void WaitForRoleRelease()
    {
        _roleWaits++;
        Volatile.Write(ref _rtBlocked, 1);
        Interlocked.MemoryBarrier();
        int owner = Volatile.Read(ref _roleOwner);
        if (owner != RoleFree && owner != RoleClosed)
        {
            _roleReleased.Wait(); // the releaser cleared _rtBlocked
            return;
        }
        if (Interlocked.Exchange(ref _rtBlocked, 0) == 0)
        {
            _roleReleased.Wait(); // a releaser claimed the flag: consume its signal
        }
    }

    /// <summary>Takes the role for good (no caller polls any more).</summary>
    private void TakeRoleForGood()
    {
        while (true)
        {
            int owner = Volatile.Read(ref _roleOwner);
            if (owner == RoleClosed || (owner == RoleFree && Interlocked.CompareExchange(ref _roleOwner, RoleClosed, RoleFree) == RoleFree))
            {
                return;
            }
            if (owner != RoleFree)
            {
                WaitForRoleRelease();
            }
        }
    }

    private void FinishClose(IFrameHandler handler)
    {
        TakeRoleForGood();
        bool peerGone;
        lock (_stateLock)
        {
            peerGone = _stopKind == StopKind.PeerGone;
        }
        if (peerGone)
        {
            // Deliver what the peer published before it went (a reply that beat its exit, its goodbye).
            try
            {
                for (int i = 0; i < 100_000; i++)
                {
                    PollResult result = _reader.Poll(handler);
                    if (result == PollResult.Empty)
                    {
                        break;
                    }
                    if (result == PollResult.Goodbye)
                    {
                        RequestStop(StopKind.Goodbye, null);
                        break;
                    }
                }
            }
            catch (Exception)
            {
                // A torn record from a dying peer: what came before was delivered.
            }
        }
        _reader.Discard();
        bool endSocket;
        bool disposed;
        lock (_stateLock)
        {
            endSocket = _stopKind is StopKind.Fault or StopKind.Goodbye;
            disposed = _stopKind == StopKind.Disposed;
        }
        if (endSocket)
        {
            ShutdownSocket(); // a faulted channel tells its peer at once (EOF); after a goodbye, answer with ours
        }
        NotifyClosed(handler);
        // Stopped by the peer (goodbye, death), a fault or a timeout: nobody may ever call Dispose (a server
        // forgets a closed connection), so the memory and the socket go now; the role is closed, so no caller
        // reads the ring, and ReleaseResources takes the send lock, so no sender writes it. Disposed from a
        // handler: Dispose left the release to this thread. Disposed from elsewhere: Dispose releases.
        if (!disposed || Volatile.Read(ref _releaseOnExit) != 0)
        {
            ReleaseResources();
        }
    }
}
