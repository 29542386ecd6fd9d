using System.Buffers;
using XCall.Runtime.CompilerServices;
using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Transport;

namespace XCall.Tests;

/// <summary>
/// References across a reconnect, with the interleavings forced: the real <see cref="ReconnectingChannel"/> over
/// in-memory links (server A behind link 0, server B behind link 1), and a link that lets a test act after a
/// reply has come in but before the caller reads it (the caller's thread "descheduled" there).
/// </summary>
public sealed class LinkGenerationTests
{
    private static readonly RemoteOptions s_options = new() { ReconnectBackoff = TimeSpan.FromMilliseconds(20), MaxReconnectBackoff = TimeSpan.FromMilliseconds(200) };

    [Fact]
    public void A_reply_read_after_a_reconnect_still_belongs_to_the_link_it_came_on()
    {
        using var rig = new Rig();
        ICounter? fresh = null;
        rig.First.Arm(() =>
        {
            // Link 0 dies after its reply to CreateCounter(100) came in; another thread reconnects and gets
            // server B's counter, which has the same id.
            rig.KillFirstLink();
            fresh = Task.Run(() => rig.Service.CreateCounter(500)).GetAwaiter().GetResult();
        });
        ICounter old = rig.Service.CreateCounter(100); // server A's counter, read after link 1 is up

        Assert.Equal(1, rig.Channel.LinkGeneration);
        Assert.NotNull(fresh);
        Assert.NotSame(fresh, old);
        Assert.Equal(((ProxyBase)(object)fresh).ObjectId, ((ProxyBase)(object)old).ObjectId);
        Assert.Throws<XCallDisconnectedException>(() => old.Next());
        Assert.Equal(501, fresh.Next());
        Assert.Equal(1, rig.Connection.ImportedReferenceCount);
    }

    [Fact]
    public void A_reply_read_after_the_loss_gives_a_dead_proxy_that_neither_counts_nor_reconnects()
    {
        using var rig = new Rig();
        rig.First.Arm(rig.KillFirstLink); // nobody reconnects
        ICounter old = rig.Service.CreateCounter(100);

        Assert.Equal(0, rig.Connection.ImportedReferenceCount);
        Assert.Throws<XCallDisconnectedException>(() => old.Next());
        ((IDisposable)old).Dispose();
        Assert.Equal(0, rig.Connects);
        Assert.Equal(0, rig.Channel.LinkGeneration);
    }

    [Fact]
    public void A_reply_to_a_call_that_came_over_the_lost_link_is_not_sent_on_the_link_that_replaced_it()
    {
        using var rig = new Rig();
        // Server A calls this callback back; while it runs, link 0 is lost and another thread reconnects.
        var callback = new ActingCallback(() =>
        {
            rig.KillFirstLink();
            var other = new Thread(() => rig.Service.CreateCounter(1));
            other.Start();
            other.Join();
        });

        Assert.Throws<XCallDisconnectedException>(() => rig.Service.CallBack(callback, 1));

        Assert.Equal(1, callback.Calls);
        Assert.NotNull(rig.Second);
        Assert.Equal(0, rig.Second.Replies); // the callback's reply was for server A: dropped, not sent to server B
        Assert.Equal(2, rig.Service.CreateCounter(1).Next()); // link 1 serves on
    }

    [Fact]
    public void A_frame_begun_on_the_lost_link_is_committed_there_not_on_the_link_that_replaced_it()
    {
        var first = new CountingLink();
        var second = new CountingLink();
        using var channel = new ReconnectingChannel(first, () => second, s_options);
        channel.Start(new IgnoringHandler());
        channel.BeginFrame(new FrameHeader(FrameKind.OneWay, 0, 0, 1)); // this thread's frame, on link 0
        first.Lose();
        // Another thread's frame reconnects and stays open on link 1 (this thread waits for it: the frame is this thread's).
        var other = new Thread(() => channel.BeginFrame(new FrameHeader(FrameKind.OneWay, 0, 0, 2)));
        other.Start();
        other.Join();

        channel.CommitFrame();

        Assert.Equal(1, first.Commits);
        Assert.Equal(0, second.Commits);
        Assert.Equal(1, second.Begins);
    }

    [Fact]
    public void A_reply_that_cannot_be_read_drops_its_link_and_the_next_call_reconnects()
    {
        XCallServer serverA = new XCallServer().Add<ICallbacks>(new Callbacks());
        XCallServer serverB = new XCallServer().Add<ICallbacks>(new Callbacks());
        (InMemoryChannel client0, InMemoryChannel server0) = InMemoryChannel.CreatePair("garbled");
        serverA.Attach(server0);
        int connects = 0;
        var channel = new ReconnectingChannel(new GarblingLink(client0), () =>
        {
            Interlocked.Increment(ref connects);
            (InMemoryChannel client1, InMemoryChannel server1) = InMemoryChannel.CreatePair("fine");
            serverB.Attach(server1);
            return client1;
        }, s_options);
        using var connection = new XCallConnection(channel);
        connection.Start();
        ICallbacks service = connection.GetService<ICallbacks>();
        channel.AfterReconnect = () => connection.GetService<ICallbacks>();

        Assert.Throws<XCallProtocolException>(() => service.CreateCounter(1)); // link 0 garbles every reply after the Hello

        Assert.False(connection.IsClosed); // only the link went: the service reconnects, as after a malformed frame on the receiving side
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            try
            {
                Assert.Equal(2, service.CreateCounter(1).Next());
                break;
            }
            catch (XCallDisconnectedException) when (clock.Elapsed < TimeSpan.FromSeconds(30))
            {
                Thread.Yield(); // the link's loss is still being reported, or the backoff runs
            }
        }
        Assert.Equal(1, connects);
        Assert.Equal(1, channel.LinkGeneration);
    }

    /// <summary>Forwards to an in-memory link, and hands the connection a payload it cannot read for every reply after the first.</summary>
    private sealed class GarblingLink(FrameChannel inner) : FrameChannel
    {
        public override string RemoteEndpoint => inner.RemoteEndpoint;

        public override void Start(IFrameHandler handler) => inner.Start(new Garbler(handler));

        public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline) => inner.BeginFrame(header, deadline);

        public override void CommitFrame() => inner.CommitFrame();

        public override void AbortFrame() => inner.AbortFrame();

        public override bool WaitForReply(IReplyWait call, long deadline) => inner.WaitForReply(call, deadline);

        public override void Dispose() => inner.Dispose();

        private sealed class Garbler(IFrameHandler handler) : IFrameHandler
        {
            private int _replies;

            public XCall.Marshal.MarshalLimits Limits => handler.Limits;

            public void OnFrame(in FrameHeader header, ref XCall.Marshal.MarshalReader payload)
            {
                if (header.Kind == FrameKind.Reply && Interlocked.Increment(ref _replies) > 1)
                {
                    var garbled = new XCall.Marshal.MarshalReader(new byte[] { 0xFF }); // not a reference tag
                    handler.OnFrame(header, ref garbled);
                    return;
                }
                handler.OnFrame(header, ref payload);
            }

            public void OnClosed(Exception? error) => handler.OnClosed(error);

            public void OnLinkLost(Exception error, int linkGeneration) => handler.OnLinkLost(error, linkGeneration);
        }
    }

    /// <summary>A connection over a reconnecting channel whose first link is hooked; reconnects go to server B.</summary>
    private sealed class Rig : IDisposable
    {
        private readonly InMemoryChannel _firstServerSide;
        private readonly ManualResetEventSlim _linkLost = new();
        private int _connects;

        public Rig()
        {
            XCallServer serverA = new XCallServer().Add<ICallbacks>(new Callbacks());
            XCallServer serverB = new XCallServer().Add<ICallbacks>(new Callbacks());
            (InMemoryChannel client0, _firstServerSide) = InMemoryChannel.CreatePair("link0");
            serverA.Attach(_firstServerSide);
            First = new HookedLink(client0);
            var channel = new ReconnectingChannel(First, () =>
            {
                Interlocked.Increment(ref _connects);
                (InMemoryChannel client1, InMemoryChannel server1) = InMemoryChannel.CreatePair("link1");
                serverB.Attach(server1);
                Second = new HookedLink(client1);
                return Second;
            }, s_options);
            Channel = channel;
            Connection = new XCallConnection(channel);
            Connection.Start();
            Service = Connection.GetService<ICallbacks>();
            channel.AfterReconnect = () => Connection.GetService<ICallbacks>(); // as Remote.Open does: Hello on the new link
            Connection.LinkLost += (_, _) => _linkLost.Set();
        }

        public HookedLink First { get; }

        public HookedLink? Second { get; private set; }

        public FrameChannel Channel { get; }

        public XCallConnection Connection { get; }

        public ICallbacks Service { get; }

        public int Connects => Volatile.Read(ref _connects);

        /// <summary>Closes link 0 from the server's side and waits until the connection has handled the loss.</summary>
        public void KillFirstLink()
        {
            _firstServerSide.Dispose();
            Assert.True(_linkLost.Wait(TimeSpan.FromSeconds(30)), "the link's loss was not reported");
        }

        public void Dispose() => Connection.Dispose();
    }

    /// <summary>A client callback that runs an action on its first report.</summary>
    private sealed class ActingCallback(Action action) : ICallback
    {
        private int _calls;

        public int Calls => Volatile.Read(ref _calls);

        public int Report(int value)
        {
            if (Interlocked.Increment(ref _calls) == 1)
            {
                action();
            }
            return value;
        }

        public int Nested(int depth) => depth;
    }

    /// <summary>A link that counts the frames begun and committed on it, and can be lost on demand.</summary>
    private sealed class CountingLink : FrameChannel
    {
        private readonly ArrayBufferWriter<byte> _output = new();
        private IFrameHandler? _handler;

        public int Begins { get; private set; }

        public int Commits { get; private set; }

        public override string RemoteEndpoint => "mem://counting";

        public void Lose() => _handler!.OnClosed(new XCallDisconnectedException(RemoteEndpoint, "lost on purpose"));

        public override void Start(IFrameHandler handler) => _handler = handler;

        public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline)
        {
            Begins++;
            return _output;
        }

        public override void CommitFrame() => Commits++;

        public override void AbortFrame()
        {
        }

        public override void Dispose()
        {
        }
    }

    private sealed class IgnoringHandler : IFrameHandler
    {
        public XCall.Marshal.MarshalLimits Limits => XCall.Marshal.MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref XCall.Marshal.MarshalReader payload)
        {
        }

        public void OnClosed(Exception? error)
        {
        }
    }

    /// <summary>
    /// Forwards to an in-memory link; runs a hook once, after a reply has come in and before the caller reads it. While
    /// armed, a reply is handed on only once its caller waits for it: a reply that came before the caller's check after
    /// sending would complete the call with no wait, and the hook would never run.
    /// </summary>
    private sealed class HookedLink(FrameChannel inner) : FrameChannel
    {
        private Action? _hook;
        private readonly ManualResetEventSlim _callerWaits = new();

        public override string RemoteEndpoint => inner.RemoteEndpoint;

        public void Arm(Action hook) => _hook = hook;

        public override void Start(IFrameHandler handler) => inner.Start(new HoldingHandler(this, handler));

        /// <summary>Reply frames this side began on the link.</summary>
        public int Replies => Volatile.Read(ref _replies);

        private int _replies;

        public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline)
        {
            if (header.Kind == FrameKind.Reply)
            {
                Interlocked.Increment(ref _replies);
            }
            return inner.BeginFrame(header, deadline);
        }

        public override void CommitFrame() => inner.CommitFrame();

        public override void AbortFrame() => inner.AbortFrame();

        public override bool WaitForReply(IReplyWait call, long deadline)
        {
            if (Volatile.Read(ref _hook) is not null)
            {
                _callerWaits.Set();
            }
            bool inTime = inner.WaitForReply(call, deadline);
            if (call.IsCompleted && Interlocked.Exchange(ref _hook, null) is { } hook)
            {
                hook();
            }
            return inTime;
        }

        public override void Dispose() => inner.Dispose();

        /// <summary>Holds a reply that comes while the link is armed until its caller waits for it.</summary>
        private sealed class HoldingHandler(HookedLink link, IFrameHandler handler) : IFrameHandler
        {
            public XCall.Marshal.MarshalLimits Limits => handler.Limits;

            public void OnFrame(in FrameHeader header, ref XCall.Marshal.MarshalReader payload)
            {
                if (header.Kind == FrameKind.Reply && Volatile.Read(ref link._hook) is not null && !link._callerWaits.Wait(TimeSpan.FromSeconds(30)))
                {
                    throw new TimeoutException("the armed reply's caller never waited for it");
                }
                handler.OnFrame(header, ref payload);
            }

            public void OnClosed(Exception? error) => handler.OnClosed(error);

            public void OnLinkLost(Exception error, int linkGeneration) => handler.OnLinkLost(error, linkGeneration);
        }
    }
}
