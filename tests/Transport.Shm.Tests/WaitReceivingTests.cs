using XCall.Marshal;
using XCall.Transport.Shm.Ring;
using XCall.Transport.Shm.Tests.Support;

namespace XCall.Transport.Shm.Tests;

/// <summary>
/// <see cref="FrameChannel.WaitReceiving"/> over shared memory: a thread waiting for a condition that any frame may
/// end reads the ring itself, handles the frames there, keeps the peer from waking the receive thread meanwhile,
/// and gives the reading back when its wait ends. Also a caller's <see cref="FrameChannel.WaitForReply"/> that
/// ends for a call nested in its own and begins again.
/// </summary>
[Collection(nameof(CoreDemandCollection))]
public sealed class WaitReceivingTests : IDisposable
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    private readonly TestDirectory _dir = new();

    public void Dispose()
    {
        CoreDemand.ForceOversubscribed(null);
        LendWatch.Paused = false;
        _dir.Dispose();
    }

    [Fact]
    public async Task A_waiter_that_comes_back_lends_the_ring_and_finds_the_frame_that_came_meanwhile()
    {
        // A wait that says it comes back leaves the ring disarmed when it ends (lent): a frame sent before the next wait
        // wakes nobody, and the next wait reads it on its own thread. The watch is paused, so the lend cannot end early.
        using Pair pair = await BusySpinPairWithTheReceiveThreadAsleep("wr-lend");
        LendWatch.Paused = true;
        int wakeSeq = pair.Server.ReceiveThreadWakeSeq;
        var plain = new FrameCount(1); // a wait that does not say it comes back re-arms the ring as before
        pair.Handler.Expect(plain);
        using (var waiter = Waiter.Start(pair, plain))
        {
            SendOneWay(pair.Client, -1);
            waiter.Joined();
        }
        Assert.False(pair.Server.IsLent);
        for (int i = 0; i < 10; i++)
        {
            var first = new FrameCount(1) { ComesBack = true };
            pair.Handler.Expect(first);
            using (var waiter = Waiter.Start(pair, first))
            {
                SendOneWay(pair.Client, 2 * i);
                waiter.Joined();
                Assert.Equal(waiter.Id, first.HandledOn);
            }
            Assert.True(pair.Server.IsLent);
            Assert.Equal(0, pair.Server.RoleOwner);
            var next = new FrameCount(1) { ComesBack = true };
            pair.Handler.Expect(next);
            SendOneWay(pair.Client, 2 * i + 1); // while lent: the peer wakes nobody
            using (var waiter = Waiter.Start(pair, next))
            {
                waiter.Joined();
                Assert.Equal(waiter.Id, next.HandledOn);
                Assert.Equal(2 * i + 1, next.LastValue);
            }
            Assert.Equal(wakeSeq, pair.Server.ReceiveThreadWakeSeq); // neither frame woke the receive thread
        }
    }

    [Fact]
    public async Task A_thread_whose_wait_needed_none_lends_itself_the_ring_and_finds_the_next_frame()
    {
        // LendReceiving: a thread that found what it waited for already there (the receive thread brought it) says it
        // comes back; the ring is left disarmed, the next frame wakes nobody, and the thread's next wait reads it.
        using Pair pair = await BusySpinPairWithTheReceiveThreadAsleep("wr-lend-at-once");
        LendWatch.Paused = true;
        int wakeSeq = pair.Server.ReceiveThreadWakeSeq;
        Assert.False(pair.Server.IsLent);
        pair.Server.LendReceiving();
        Assert.True(pair.Server.IsLent);
        Assert.Equal(0, pair.Server.RoleOwner);
        var next = new FrameCount(1) { ComesBack = true };
        pair.Handler.Expect(next);
        SendOneWay(pair.Client, 3); // while lent: the peer wakes nobody
        using (var waiter = Waiter.Start(pair, next))
        {
            waiter.Joined();
            Assert.Equal(waiter.Id, next.HandledOn);
            Assert.Equal(3, next.LastValue);
        }
        Assert.Equal(wakeSeq, pair.Server.ReceiveThreadWakeSeq);
        pair.Server.LendReceiving(); // lent already (the wait that came back lent it again): nothing changes
        Assert.True(pair.Server.IsLent);
    }

    [Fact]
    public async Task A_lend_nobody_takes_back_is_ended_by_the_watch_and_the_receive_thread_reads_what_came()
    {
        using Pair pair = await BusySpinPairWithTheReceiveThreadAsleep("wr-lend-end");
        int wakeSeq = pair.Server.ReceiveThreadWakeSeq;
        int waiterId = 0;
        // The ring is lent only while the receive thread sleeps on it; on a loaded machine it may be awake when the wait
        // ends (then the wait re-arms), so this tries again, putting the receive thread back to sleep first.
        WaitUntil(() =>
        {
            var never = new FrameCount(1);
            WaitUntil(() => pair.Server.WaitReceiving(never, Environment.TickCount64 + 10) || pair.Server.ReceiveThreadSleeps, "the server's receive thread sleeps on the ring");
            var first = new FrameCount(1) { ComesBack = true };
            pair.Handler.Expect(first);
            using var waiter = Waiter.Start(pair, first);
            SendOneWay(pair.Client, 5);
            waiter.Joined();
            waiterId = waiter.Id;
            return pair.Server.IsLent;
        }, "a wait that comes back lends the ring");
        var stranded = new FrameCount(1);
        pair.Handler.Expect(stranded);
        SendOneWay(pair.Client, 6); // nobody comes back: the watch ends the lend within a few of its looks
        WaitUntil(() => stranded.IsCompleted, "the frame sent while lent is read");
        Assert.Equal(6, stranded.LastValue);
        Assert.NotEqual(waiterId, stranded.HandledOn);
        Assert.False(pair.Server.IsLent);
        Assert.NotEqual(wakeSeq, pair.Server.ReceiveThreadWakeSeq); // the watch woke the receive thread, which read it
    }

    [Fact]
    public async Task A_caller_that_takes_a_lent_ring_reads_what_came_after_its_answer()
    {
        // While the ring is lent the peer wakes nobody: an answer and a frame after it wait in the ring. A caller that takes
        // the ring stops polling at its answer; it must not leave the ring marked with the other frame still in it (the
        // mark gets only later frames a wake-up), so it re-arms and reads it. The watch is paused: only the caller can.
        using Pair pair = await BusySpinPairWithTheReceiveThreadAsleep("wr-lend-caller");
        LendWatch.Paused = true;
        var first = new FrameCount(1) { ComesBack = true };
        pair.Handler.Expect(first);
        using (var waiter = Waiter.Start(pair, first))
        {
            SendOneWay(pair.Client, 1);
            waiter.Joined();
        }
        Assert.True(pair.Server.IsLent);
        var call = new CallWithNested(77);
        pair.Handler.Expect(call);
        var after = new FrameCount(1);
        pair.Handler.Expect(after);
        Send(pair.Server, new FrameHeader(FrameKind.Call, call.CallId, 1, 2), 0); // this side's call: an answer is owed
        Send(pair.Client, new FrameHeader(FrameKind.Reply, call.CallId, 1, 2), 9); // its answer, then a frame, both while lent
        SendOneWay(pair.Client, 2);
        Assert.True(pair.Server.WaitForReply(call, Environment.TickCount64 + (long)Patience.TotalMilliseconds));
        Assert.Equal(9, call.Reply);
        WaitUntil(() => after.IsCompleted, "the frame after the answer is read");
        Assert.Equal(2, after.LastValue);
        Assert.False(pair.Server.IsLent);
    }

    /// <summary>A thread that waits on the server's ring for <paramref name="condition"/>, started once it holds the ring.</summary>
    private sealed class Waiter : IDisposable
    {
        private readonly Thread _thread;
        private bool _inTime;
        private int _id;

        private Waiter(Pair pair, IReplyWait condition)
        {
            _thread = new Thread(() =>
            {
                Volatile.Write(ref _id, Environment.CurrentManagedThreadId);
                _inTime = pair.Server.WaitReceiving(condition, Environment.TickCount64 + (long)Patience.TotalMilliseconds);
            });
        }

        public int Id => Volatile.Read(ref _id);

        /// <summary>Starts the waiter and returns once it reads the ring (or its condition was already over).</summary>
        public static Waiter Start(Pair pair, IReplyWait condition)
        {
            var waiter = new Waiter(pair, condition);
            waiter._thread.Start();
            WaitUntil(() => waiter.Id != 0 && (pair.Server.RoleOwner == waiter.Id || !waiter._thread.IsAlive), "the waiting thread takes the ring");
            return waiter;
        }

        public void Joined()
        {
            Assert.True(_thread.Join(Patience), "the waiting thread returned");
            Assert.True(_inTime, "the wait ended in time");
        }

        public void Dispose() => _thread.Join(Patience);
    }

    [Fact]
    public async Task A_waiting_thread_handles_one_way_frames_itself_and_the_peer_wakes_nobody()
    {
        // Busy-spinning waits never sleep on the ring (a sleeping waiter is woken by the peer, as is right): so
        // whatever the scheduling, a frame that woke anybody woke the receive thread, which the count shows. The
        // receive thread, spinning too, sleeps once a waiter asks it for the ring (cores forced free, so it asks).
        using Pair pair = await BusySpinPairWithTheReceiveThreadAsleep("wr-own");
        int wakeSeq = pair.Server.ReceiveThreadWakeSeq;
        for (int i = 0; i < 20; i++)
        {
            var condition = new FrameCount(1);
            pair.Handler.Expect(condition);
            int waiter = 0;
            bool inTime = false;
            var thread = new Thread(() =>
            {
                Volatile.Write(ref waiter, Environment.CurrentManagedThreadId);
                inTime = pair.Server.WaitReceiving(condition, Environment.TickCount64 + (long)Patience.TotalMilliseconds);
            });
            thread.Start();
            // Sent once the waiting thread reads the ring: the peer then finds the ring disarmed.
            WaitUntil(() => Volatile.Read(ref waiter) != 0 && pair.Server.RoleOwner == waiter, "the waiting thread takes the ring");
            SendOneWay(pair.Client, i);
            Assert.True(thread.Join(Patience));
            Assert.True(inTime);
            Assert.Equal(waiter, condition.HandledOn);
            Assert.Equal(i, condition.LastValue);
            Assert.Equal(wakeSeq, pair.Server.ReceiveThreadWakeSeq); // the frame woke no receive thread
        }
        Assert.True(pair.Server.ReceiveThreadSleeps);
    }

    [Fact]
    public async Task A_caller_that_runs_a_call_nested_in_its_own_leaves_the_ring_marked_and_reads_its_reply_itself()
    {
        // A caller polling for its reply gets a call nested in its call, lets the ring go to run it, and then polls for
        // its reply again. Its own call being the one answer owed, it leaves the ring marked "callers poll" (no re-arm):
        // the reply, published while the caller ran the nested call, wakes nobody, and the caller reads it itself.
        using Pair pair = await BusySpinPairWithTheReceiveThreadAsleep("wr-nested");
        int wakeSeq = pair.Server.ReceiveThreadWakeSeq;
        long marked = pair.Server.ReleasesLeftMarked;
        var call = new CallWithNested(41);
        pair.Handler.Expect(call);
        using var ranNested = new ManualResetEventSlim();
        using var replySent = new ManualResetEventSlim();
        using var caller = Caller.Start(pair, call, () =>
        {
            ranNested.Set();
            replySent.Wait(Patience);
        });
        Assert.True(ranNested.Wait(Patience), "the nested call ended the caller's wait");
        Send(pair.Client, new FrameHeader(FrameKind.Reply, 41, 1, 2), 7);
        replySent.Set();
        caller.Joined();
        Assert.Equal(7, call.Reply);
        Assert.Equal(caller.Waiter, call.ReplyReadOn);
        Assert.Equal(wakeSeq, pair.Server.ReceiveThreadWakeSeq); // neither frame woke the receive thread
        Assert.Equal(marked + 2, pair.Server.ReleasesLeftMarked); // after the nested call, and after the reply
        Assert.True(pair.Server.ReceiveThreadSleeps);
    }

    [Fact]
    public async Task A_caller_whose_call_ends_while_it_runs_the_nested_call_re_arms_the_ring_for_what_follows()
    {
        // As above, but a cancel ends the call while the caller runs the nested call: the caller does not poll for an
        // answer again, so its next wait, finding the call over, re-arms the ring; what the peer still sends for the
        // call (here a second nested call) then wakes the receive thread, which reads it.
        using Pair pair = await BusySpinPairWithTheReceiveThreadAsleep("wr-cancel");
        int wakeSeq = pair.Server.ReceiveThreadWakeSeq;
        var call = new CallWithNested(43);
        pair.Handler.Expect(call);
        int waiter;
        using (var caller = Caller.Start(pair, call, call.Cancel)) // the second wait is over at once
        {
            caller.Joined();
            waiter = caller.Waiter;
        }
        Assert.Equal(wakeSeq, pair.Server.ReceiveThreadWakeSeq);
        Send(pair.Client, new FrameHeader(FrameKind.Call, 11, 3, 4, FrameFlags.Nested), 43);
        WaitUntil(() => call.NestedCalls == 2, "the second nested call is read");
        Assert.NotEqual(waiter, call.LastNestedOn);
        Assert.NotEqual(wakeSeq, pair.Server.ReceiveThreadWakeSeq); // it woke the receive thread
    }

    [Fact]
    public async Task A_wait_that_times_out_gives_the_ring_back_to_the_receive_thread()
    {
        using Pair pair = await Pair.StartAsync(_dir, "wr-back");
        WaitUntil(() => pair.Server.ReceiveThreadSleeps, "the server's receive thread sleeps on the ring");
        var never = new FrameCount(1);
        Assert.False(pair.Server.WaitReceiving(never, Environment.TickCount64 + 50));
        Assert.Equal(0, pair.Server.RoleOwner);

        var later = new FrameCount(1);
        pair.Handler.Expect(later);
        SendOneWay(pair.Client, 7);
        Assert.True(later.Wait(Environment.TickCount64 + (long)Patience.TotalMilliseconds), "the receive thread handles a frame sent after the wait");
        Assert.NotEqual(Environment.CurrentManagedThreadId, later.HandledOn);
        Assert.Equal(7, later.LastValue);
    }

    [Fact]
    public async Task Many_frames_end_a_wait_for_all_of_them_whoever_reads_them()
    {
        using Pair pair = await Pair.StartAsync(_dir, "wr-many");
        const int Count = 2000;
        var condition = new FrameCount(Count);
        pair.Handler.Expect(condition);
        Task sender = Task.Run(() =>
        {
            for (int i = 0; i < Count; i++)
            {
                SendOneWay(pair.Client, i);
            }
        });
        Assert.True(pair.Server.WaitReceiving(condition, Environment.TickCount64 + (long)Patience.TotalMilliseconds));
        await sender;
        Assert.Equal(Count - 1, condition.LastValue);
        Assert.Equal(Count, condition.Count);
    }

    /// <summary>
    /// A pair whose waits busy-spin, so they never sleep on the ring (a sleeping waiter is woken by the peer, as is
    /// right) and a frame that woke anybody woke the receive thread; that thread, spinning too, sleeps once a waiter
    /// asks it for the ring (cores forced free, so it asks), which this waits for.
    /// </summary>
    private async Task<Pair> BusySpinPairWithTheReceiveThreadAsleep(string name)
    {
        CoreDemand.ForceOversubscribed(false);
        Pair pair = await Pair.StartAsync(_dir, name, ShmIdleStrategy.BusySpin);
        try
        {
            var never = new FrameCount(1);
            WaitUntil(() => pair.Server.WaitReceiving(never, Environment.TickCount64 + 10) || pair.Server.ReceiveThreadSleeps, "the server's receive thread sleeps on the ring");
            return pair;
        }
        catch
        {
            pair.Dispose();
            throw;
        }
    }

    /// <summary>
    /// The calling side of the nested-call tests, on a background thread of its own: it sends the call, waits for its
    /// reply (the peer's nested call, sent once the caller polls, ends that wait), runs the nested call, does what the
    /// test says, and waits again. <see cref="Joined"/> checks both waits ended in time and nothing was thrown.
    /// </summary>
    private sealed class Caller : IDisposable
    {
        private readonly Thread _thread;
        private int _waiter;
        private bool _firstWait;
        private bool _secondWait;
        private Exception? _thrown;

        private Caller(Pair pair, CallWithNested call, Action between)
        {
            long deadline = Environment.TickCount64 + (long)Patience.TotalMilliseconds;
            _thread = new Thread(() =>
            {
                try
                {
                    Volatile.Write(ref _waiter, Environment.CurrentManagedThreadId);
                    Send(pair.Server, new FrameHeader(FrameKind.Call, call.CallId, 1, 2), 0);
                    _firstWait = pair.Server.WaitForReply(call, deadline);
                    call.RunNested();
                    between();
                    _secondWait = pair.Server.WaitForReply(call, deadline);
                }
                catch (Exception e)
                {
                    Volatile.Write(ref _thrown, e);
                }
            })
            { IsBackground = true };
        }

        public int Waiter => Volatile.Read(ref _waiter);

        public static Caller Start(Pair pair, CallWithNested call, Action between)
        {
            var caller = new Caller(pair, call, between);
            caller._thread.Start();
            WaitUntil(() => caller.Waiter != 0 && pair.Server.RoleOwner == caller.Waiter, "the caller takes the ring");
            Send(pair.Client, new FrameHeader(FrameKind.Call, 9, 3, 4, FrameFlags.Nested), (int)call.CallId);
            return caller;
        }

        public void Joined()
        {
            Assert.True(_thread.Join(Patience));
            Assert.Null(Volatile.Read(ref _thrown));
            Assert.True(_firstWait, "the nested call ended the first wait");
            Assert.True(_secondWait, "the second wait ended in time");
        }

        public void Dispose() => _thread.Join(Patience);
    }

    [Fact]
    public async Task A_channel_answers_in_place_only_while_its_outgoing_ring_has_room_to_spare()
    {
        using var dir = new TestDirectory();
        ShmOptions options = dir.Options() with { HeartbeatTimeout = Timeout.InfiniteTimeSpan, RingSize = 64 << 10 };
        using ShmListener listener = ShmTransport.Listen("inplace", options);
        ValueTask<FrameChannel> accept = listener.AcceptAsync();
        using FrameChannel client = await ShmTransport.ConnectAsync(listener.Name, options);
        using FrameChannel server = await accept;
        using var gate = new ManualResetEventSlim();
        var held = new HoldingHandler(gate);
        server.Start(new CountingHandler());
        client.Start(held);
        Assert.True(server.MayAnswerInPlace);

        // The client's receive thread holds the first frame: what follows stays in the server's outgoing ring.
        byte[] payload = new byte[1000];
        int sent = 0;
        for (; sent < 40; sent++)
        {
            server.SendFrame(new FrameHeader(FrameKind.OneWay, 0, 1, 2), payload, long.MaxValue);
        }
        Assert.True(held.First.Wait(Patience), "the client's receive thread took the first frame");
        Assert.False(server.MayAnswerInPlace, "40 KB unread in a 64 KB ring: less than half of it free");

        gate.Set();
        WaitUntil(() => Volatile.Read(ref held.Frames) == sent, "the client read every frame");
        Assert.True(server.MayAnswerInPlace, "the ring is empty again");
    }

    /// <summary>Holds the first frame until the gate opens, then counts every frame.</summary>
    private sealed class HoldingHandler(ManualResetEventSlim gate) : IFrameHandler
    {
        public readonly ManualResetEventSlim First = new();

        public int Frames;

        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            First.Set();
            gate.Wait();
            Interlocked.Increment(ref Frames);
        }

        public void OnClosed(Exception? error)
        {
        }
    }

    private static void SendOneWay(FrameChannel channel, int value) => Send(channel, new FrameHeader(FrameKind.OneWay, 0, 1, 2), value);

    private static void Send(FrameChannel channel, FrameHeader header, int value)
    {
        var writer = new MarshalWriter(channel.BeginFrame(header));
        writer.Write(value);
        writer.Flush();
        channel.CommitFrame();
    }

    private static void WaitUntil(Func<bool> condition, string what)
    {
        if (!SpinWait.SpinUntil(condition, Patience))
        {
            throw new TimeoutException($"Not within {Patience.TotalSeconds} s: {what}.");
        }
    }

    /// <summary>A condition that <paramref name="expected"/> frames end; it records the last frame's value and thread.</summary>
    private sealed class FrameCount(int expected) : IReplyWait
    {
        private readonly object _gate = new();
        private int _count;

        public int Count => Volatile.Read(ref _count);

        public int LastValue { get; private set; } = -1;

        public int HandledOn { get; private set; }

        public bool IsCompleted => Count >= expected;

        public bool WaitOver => IsCompleted;

        public bool IsNested => false;

        public bool ComesBack { get; init; }

        public void Handle(int value)
        {
            LastValue = value;
            HandledOn = Environment.CurrentManagedThreadId;
            lock (_gate)
            {
                _count++;
                Monitor.PulseAll(_gate);
            }
        }

        public bool Wait(long deadline)
        {
            lock (_gate)
            {
                while (!IsCompleted)
                {
                    long left = deadline - Environment.TickCount64;
                    if (left <= 0)
                    {
                        return false;
                    }
                    Monitor.Wait(_gate, (int)Math.Min(left, int.MaxValue));
                }
            }
            return true;
        }
    }

    /// <summary>A sync call's wait as a caller's is: over when its reply came or a call nested in it waits for the caller's thread.</summary>
    private sealed class CallWithNested(ulong callId) : IReplyWait
    {
        private int _nested;
        private int _replied;
        private int _nestedCalls;

        public ulong CallId => callId;

        public int Reply { get; private set; } = -1;

        public int ReplyReadOn { get; private set; }

        public bool IsCompleted => Volatile.Read(ref _replied) != 0;

        public bool WaitOver => IsCompleted || Volatile.Read(ref _nested) != 0;

        public bool WaitsAgain => Volatile.Read(ref _nested) != 0 && !IsCompleted;

        public bool IsNested => false;

        public int NestedCalls => Volatile.Read(ref _nestedCalls);

        public int LastNestedOn { get; private set; }

        public void Nested()
        {
            LastNestedOn = Environment.CurrentManagedThreadId;
            Volatile.Write(ref _nested, 1);
            Interlocked.Increment(ref _nestedCalls);
        }

        public void RunNested() => Volatile.Write(ref _nested, 0);

        /// <summary>Ends the call with no answer, as a cancel does.</summary>
        public void Cancel() => Volatile.Write(ref _replied, 1);

        public void Answered(int value)
        {
            Reply = value;
            ReplyReadOn = Environment.CurrentManagedThreadId;
            Volatile.Write(ref _replied, 1);
        }

        public bool Wait(long deadline) => SpinWait.SpinUntil(() => WaitOver, TimeSpan.FromMilliseconds(Math.Max(0, deadline - Environment.TickCount64)));
    }

    /// <summary>Hands each one-way frame's value to the condition expected now; a nested call or a reply to the call expected.</summary>
    private sealed class CountingHandler : IFrameHandler
    {
        private FrameCount? _condition;
        private CallWithNested? _call;

        public MarshalLimits Limits => MarshalLimits.Default;

        public void Expect(FrameCount condition) => Volatile.Write(ref _condition, condition);

        public void Expect(CallWithNested call) => Volatile.Write(ref _call, call);

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            if (header.Kind == FrameKind.OneWay)
            {
                Volatile.Read(ref _condition)?.Handle(payload.Read<int>());
            }
            else if (Volatile.Read(ref _call) is { } call)
            {
                int value = payload.Read<int>();
                if (header.Kind == FrameKind.Call && (header.Flags & FrameFlags.Nested) != 0 && (ulong)value == call.CallId)
                {
                    call.Nested();
                }
                else if (header.Kind == FrameKind.Reply && header.CallId == call.CallId)
                {
                    call.Answered(value);
                }
            }
        }

        public void OnClosed(Exception? error)
        {
        }
    }

    /// <summary>A listener, a server channel with a <see cref="CountingHandler"/> and a client channel, in this process; no heartbeat.</summary>
    private sealed class Pair(ShmListener listener, ShmChannel server, FrameChannel client, CountingHandler handler) : IDisposable
    {
        public ShmChannel Server => server;

        public FrameChannel Client => client;

        public CountingHandler Handler => handler;

        public static async Task<Pair> StartAsync(TestDirectory dir, string name, ShmIdleStrategy strategy = ShmIdleStrategy.Adaptive)
        {
            ShmOptions options = dir.Options(strategy) with { HeartbeatTimeout = Timeout.InfiniteTimeSpan };
            ShmListener listener = ShmTransport.Listen(name, options);
            ValueTask<FrameChannel> accept = listener.AcceptAsync();
            FrameChannel client = await ShmTransport.ConnectAsync(listener.Name, options);
            FrameChannel server = await accept;
            var handler = new CountingHandler();
            server.Start(handler);
            client.Start(new RecordingHandler());
            return new Pair(listener, (ShmChannel)server, client, handler);
        }

        public void Dispose()
        {
            client.Dispose();
            server.Dispose();
            listener.Dispose();
        }
    }
}
