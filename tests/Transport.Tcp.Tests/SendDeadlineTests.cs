using System.Net;
using System.Net.Sockets;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

/// <summary>A caller's send deadline bounds the writing of its own frame only, never of the frames queued behind it.</summary>
public sealed class SendDeadlineTests
{
    private const int Size = 32 << 20; // far more than the sockets' buffers take (they grow to a few MiB)

    [Fact]
    public async Task A_callers_deadline_does_not_cut_off_the_frames_queued_behind_its_own()
    {
        var options = new TcpOptions { HeartbeatInterval = Timeout.InfiniteTimeSpan, HeartbeatTimeout = Timeout.InfiniteTimeSpan };
        (RawPeer accepted, FrameChannel connected) = await RawPeer.AcceptHandshakenAsync(options);
        using RawPeer peer = accepted;
        using FrameChannel channel = connected;
        channel.Start(new ReplyCollector());
        var tcp = (TcpFrameChannel)channel;
        long writesBefore = tcp.SendCount;

        // Caller A, with a deadline, commits a big frame and becomes the writer; the peer reads nothing yet.
        Task a = Task.Factory.StartNew(() => SendBig(channel, 1, Environment.TickCount64 + 5_000), TaskCreationOptions.LongRunning);
        Assert.True(SpinWait.SpinUntil(() => tcp.SendCount > writesBefore || a.IsCompleted, TimeSpan.FromSeconds(30)), "A never started writing");
        Assert.False(a.IsCompleted, "A's write should wait for the peer");
        // Caller B, without one, queues its frame behind A's.
        SendBig(channel, 2, 0);

        // The peer takes A's frame whole, then stops reading.
        (FrameKind kind, ulong callId, byte[] payload) = await peer.ReadFrameAsync();
        Assert.Equal((FrameKind.Call, 1UL, Size), (kind, callId, payload.Length));

        // A's frame is out: A returns, whatever becomes of B's frame later (its deadline is not B's).
        Task first = await Task.WhenAny(a, Task.Delay(TimeSpan.FromSeconds(30)));
        Assert.True(first == a, "A's commit still runs although its frame went out");
        await a; // no XCallTimeoutException
        (kind, callId, payload) = await peer.ReadFrameAsync(); // and B's frame follows, whole
        Assert.Equal((FrameKind.Call, 2UL, Size), (kind, callId, payload.Length));
    }

    private static void SendBig(FrameChannel channel, ulong callId, long deadline)
    {
        var output = channel.BeginFrame(new FrameHeader(FrameKind.Call, callId, 0, 7), deadline);
        output.GetSpan(Size)[..Size].Fill((byte)callId);
        output.Advance(Size);
        channel.CommitFrame();
    }
}
