using System.Collections.Concurrent;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

/// <summary>
/// A batched commit leaves its frame to a pool thread; no frame a thread needs out waits for that pool thread, which
/// threads blocked in synchronous calls may be starving. The pool flushes here are held by the test (a pool that never
/// runs them) and run, if at all, when the test says.
/// </summary>
public sealed class PoolFlushTests
{
    private static readonly TcpOptions Quiet = new() { HeartbeatInterval = Timeout.InfiniteTimeSpan, HeartbeatTimeout = Timeout.InfiniteTimeSpan };

    [Fact]
    public async Task A_frame_committed_behind_a_pool_flush_that_has_not_begun_goes_out_with_it_at_once()
    {
        using Rig rig = await Rig.OpenAsync();
        (RawPeer peer, FrameChannel channel, TcpFrameChannel tcp, ReplyCollector replies, ConcurrentQueue<IThreadPoolWorkItem> held) = rig;

        long writes = tcp.SendCount;
        Send(channel, 1, batched: true);
        Assert.Single(held);
        Assert.Equal(writes, tcp.SendCount); // the pipelined frame waits for the pool

        Send(channel, 2, batched: false); // a frame somebody waits on: written now, after the one queued before it
        Assert.Equal((FrameKind.Call, 1UL), await ReadCall(peer));
        Assert.Equal((FrameKind.Call, 2UL), await ReadCall(peer));

        // The pool thread comes at last: the flush was taken, it writes nothing.
        writes = tcp.SendCount;
        Assert.True(held.TryDequeue(out IThreadPoolWorkItem? late));
        late.Execute();
        Assert.Equal(writes, tcp.SendCount);

        Send(channel, 3, batched: false); // and the channel sends on as before
        Assert.Equal((FrameKind.Call, 3UL), await ReadCall(peer));
    }

    [Fact]
    public async Task A_caller_that_waits_for_its_reply_writes_its_frame_left_to_a_pool_flush()
    {
        using Rig rig = await Rig.OpenAsync();
        (RawPeer peer, FrameChannel channel, TcpFrameChannel tcp, ReplyCollector replies, ConcurrentQueue<IThreadPoolWorkItem> held) = rig;

        // The peer answers call 5 once it reads it; the wait for that reply (on the thread that committed the frame,
        // as a synchronous call's) is what sends it.
        Task answer = Task.Run(async () =>
        {
            Assert.Equal((FrameKind.Call, 5UL), await ReadCall(peer));
            await peer.SendAsync([.. RawPeer.Prefix(1, FrameKind.Reply, 5), 42]);
        });
        Task<bool> caller = Task.Factory.StartNew(
            () =>
            {
                Send(channel, 5, batched: true);
                Assert.Single(held);
                return channel.WaitForReply(new TaskWait(replies.Reply(5)), Environment.TickCount64 + (long)Timeouts.Long.TotalMilliseconds);
            },
            TaskCreationOptions.LongRunning);
        Assert.True(await caller.WaitAsync(Timeouts.Long), "the reply never came");
        Assert.Equal([42], await replies.Reply(5));
        await answer.WaitAsync(Timeouts.Long);

        Assert.True(held.TryDequeue(out IThreadPoolWorkItem? late));
        long writes = tcp.SendCount;
        late.Execute();
        Assert.Equal(writes, tcp.SendCount);
    }

    [Theory]
    [InlineData(false)] // B begins its wait after the hand-off
    [InlineData(true)] // B waits already (reading the socket or asleep) when A hands its frame to the pool
    public async Task A_caller_whose_frame_a_writer_with_a_deadline_left_to_the_pool_writes_it_when_it_waits(bool waitsBeforeHandOff)
    {
        using Rig rig = await Rig.OpenAsync();
        (RawPeer peer, FrameChannel channel, TcpFrameChannel tcp, ReplyCollector replies, ConcurrentQueue<IThreadPoolWorkItem> held) = rig;

        // A commits a frame larger than the sockets take, with a deadline, and writes it; the peer reads nothing yet.
        const int Big = 32 << 20;
        long writes = tcp.SendCount;
        Task a = Task.Factory.StartNew(
            () =>
            {
                var output = channel.BeginFrame(new FrameHeader(FrameKind.Call, 1, 0, 7), Environment.TickCount64 + (long)Timeouts.Long.TotalMilliseconds);
                output.GetSpan(Big)[..Big].Fill(1);
                output.Advance(Big);
                channel.CommitFrame();
            },
            TaskCreationOptions.LongRunning);
        Assert.True(SpinWait.SpinUntil(() => tcp.SendCount > writes || a.IsCompleted, Timeouts.Long), "A never started writing");
        Assert.False(a.IsCompleted, "A's write should wait for the peer");

        // B's frame queues behind A's; once A's frame is out, A leaves the rest to the pool (its deadline is its own).
        // B commits and then waits for its reply on one thread of its own, as a synchronous call does.
        using var committed = new ManualResetEventSlim();
        using var mayWait = new ManualResetEventSlim();
        Task<bool> b = Task.Factory.StartNew(
            () =>
            {
                Send(channel, 2, batched: false);
                committed.Set();
                Assert.True(mayWait.Wait(Timeouts.Long));
                return channel.WaitForReply(new TaskWait(replies.Reply(2)), Environment.TickCount64 + (long)Timeouts.Long.TotalMilliseconds);
            },
            TaskCreationOptions.LongRunning);
        Assert.True(committed.Wait(Timeouts.Long));
        if (waitsBeforeHandOff)
        {
            mayWait.Set();
        }
        (FrameKind kind, ulong callId, byte[] payload) = await peer.ReadFrameAsync().WaitAsync(Timeouts.Long);
        Assert.Equal((FrameKind.Call, 1UL, Big), (kind, callId, payload.Length));
        await a.WaitAsync(Timeouts.Long);
        Assert.Single(held);

        // B waits for its reply: its frame is still queued, so it writes it.
        mayWait.Set();
        Assert.Equal((FrameKind.Call, 2UL), await ReadCall(peer));
        await peer.SendAsync([.. RawPeer.Prefix(1, FrameKind.Reply, 2), 7]);
        Assert.True(await b.WaitAsync(Timeouts.Long), "the reply never came");
    }

    /// <summary>A channel to a raw peer, started, whose pool flushes are held in <see cref="Held"/>.</summary>
    private sealed class Rig(RawPeer peer, FrameChannel channel, ReplyCollector replies) : IDisposable
    {
        public ConcurrentQueue<IThreadPoolWorkItem> Held { get; } = new();

        public static async Task<Rig> OpenAsync()
        {
            (RawPeer peer, FrameChannel channel) = await RawPeer.AcceptHandshakenAsync(Quiet);
            var replies = new ReplyCollector();
            channel.Start(replies);
            var rig = new Rig(peer, channel, replies);
            ((TcpFrameChannel)channel).HeldPoolFlushes = rig.Held;
            return rig;
        }

        public void Deconstruct(out RawPeer p, out FrameChannel c, out TcpFrameChannel tcp, out ReplyCollector r, out ConcurrentQueue<IThreadPoolWorkItem> held)
        {
            (p, c, tcp, r, held) = (peer, channel, (TcpFrameChannel)channel, replies, Held);
        }

        public void Dispose()
        {
            channel.Dispose();
            peer.Dispose();
        }
    }

    private static void Send(FrameChannel channel, ulong callId, bool batched)
    {
        var output = channel.BeginFrame(new FrameHeader(FrameKind.Call, callId, 0, 7));
        output.GetSpan(1)[0] = (byte)callId;
        output.Advance(1);
        if (batched)
        {
            channel.CommitFrameBatched();
        }
        else
        {
            channel.CommitFrame();
        }
    }

    private static async Task<(FrameKind, ulong)> ReadCall(RawPeer peer)
    {
        (FrameKind kind, ulong callId, byte[] payload) = await peer.ReadFrameAsync().WaitAsync(Timeouts.Long);
        Assert.Equal([(byte)callId], payload);
        return (kind, callId);
    }

    /// <summary>A wait that a task's completion ends.</summary>
    private sealed class TaskWait(Task task) : IReplyWait
    {
        public bool IsCompleted => task.IsCompleted;

        public bool WaitOver => task.IsCompleted;

        public bool IsNested => false;

        public bool Wait(long deadline)
        {
            long left = Math.Max(0, deadline - Environment.TickCount64);
            return ((IAsyncResult)task).AsyncWaitHandle.WaitOne(TimeSpan.FromMilliseconds(left));
        }
    }
}
