using XCall.Transport.Shm.TestHost;
using XCall.Transport.Shm.Tests.Support;

namespace XCall.Transport.Shm.Tests;

/// <summary>
/// The listener runs handshakes in the background: one slow or silent client holds up no one else; and clients
/// that hold all 64 handshake slots without finishing give them up to newcomers.
/// </summary>
public sealed class ListenerTests : IDisposable
{
    private static readonly TimeSpan s_generous = TimeSpan.FromSeconds(60);

    private readonly TestDirectory _dir = new();

    public void Dispose() => _dir.Dispose();

    [Fact]
    public async Task A_silent_client_does_not_block_the_next_client()
    {
        // No handshake deadline on the listener: handshakes run in the background, or the silent client would
        // hold the accept loop forever.
        using ShmListener listener = ShmTransport.Listen("silent", _dir.Options() with { ConnectTimeout = Timeout.InfiniteTimeSpan });
        using RawClient silent = RawClient.Connect(listener.SocketPath); // first in the backlog, sends nothing
        Task<FrameChannel> accepting = Task.Run(() => listener.AcceptAsync().AsTask());

        using FrameChannel client = await ShmTransport.ConnectAsync("silent", _dir.Options() with { ConnectTimeout = TimeSpan.FromSeconds(30) });
        using FrameChannel server = await accepting.WaitAsync(s_generous);
        server.Start(new EchoHandler(server));
        using (var echo = new EchoClient(client))
        {
            Assert.Equal([4, 2], echo.RoundTrip([4, 2]));
        }

        Task<bool> dropped = silent.DroppedAsync();
        Assert.False(dropped.IsCompleted, "the silent client is still waited for");
        listener.Dispose();
        Assert.True(await dropped.WaitAsync(s_generous), "disposing the listener ends the silent client's handshake");
    }

    [Fact]
    public async Task A_client_that_trickles_its_hello_is_dropped_at_the_connect_timeout()
    {
        using ShmListener listener = ShmTransport.Listen("trickle", _dir.Options() with { ConnectTimeout = TimeSpan.FromSeconds(1) });
        Task<FrameChannel> accepting = Task.Run(() => listener.AcceptAsync().AsTask());
        using RawClient slow = RawClient.Connect(listener.SocketPath);
        Task<bool> dropped = slow.DroppedAsync();

        // One byte every 500 ms: each byte comes well within the timeout, the whole hello (12 s) far past it.
        byte[] hello = RawClient.Hello();
        int sent = 0;
        try
        {
            for (; sent < hello.Length && !dropped.IsCompleted; sent++)
            {
                slow.Socket.Send(hello.AsSpan(sent, 1));
                await Task.WhenAny(dropped, Task.Delay(500));
            }
        }
        catch (System.Net.Sockets.SocketException)
        {
            // The listener closed the connection between two bytes.
        }
        Assert.True(await dropped.WaitAsync(s_generous));
        Assert.True(sent < hello.Length, $"the listener waited for the whole hello ({sent} bytes)");
        Assert.False(accepting.IsCompleted, "no connection comes out of a dropped client");
    }

    [Fact]
    public async Task Disposing_the_listener_ends_pending_handshakes_and_releases_their_segments()
    {
        ShmListener listener = ShmTransport.Listen("release", _dir.Options() with { ConnectTimeout = Timeout.InfiniteTimeSpan });
        Task<FrameChannel> accepting = Task.Run(listener.Accept);
        using RawClient stalled = RawClient.Connect(listener.SocketPath);
        stalled.SendHello();
        (byte status, _, Microsoft.Win32.SafeHandles.SafeFileHandle? memory) = stalled.ReceiveReply();
        Assert.Equal(Rendezvous.Handshake.Accepted, status);
        memory!.Dispose(); // never mapped, never acknowledged: the server waits with its segment mapped
        Assert.NotEqual(0, SegmentMemory.HoldersOf("release"));

        listener.Dispose();
        Assert.Equal(0, SegmentMemory.HoldersOf("release"));
        Assert.True(await stalled.DroppedAsync().WaitAsync(s_generous));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => accepting.WaitAsync(s_generous));
    }

    [Fact]
    public async Task Silent_clients_holding_every_handshake_slot_do_not_lock_others_out()
    {
        using ShmListener listener = ShmTransport.Listen("full", _dir.Options() with { ConnectTimeout = Timeout.InfiniteTimeSpan });
        var failures = System.Threading.Channels.Channel.CreateUnbounded<(string Peer, Exception Error)>();
        listener.HandshakeFailed += (peer, error) => failures.Writer.TryWrite((peer, error));
        List<RawClient> silent = await FillSlotsAsync(listener, client => { });
        try
        {
            await AssertNewcomerIsServedAsync(listener);
            (string peer, Exception error) = await failures.Reader.ReadAsync().AsTask().WaitAsync(s_generous);
            Assert.IsType<TimeoutException>(error);
            Assert.Contains("sent nothing", error.Message);
            Assert.Equal($"shm://full (pid {Environment.ProcessId}, uid {Interop.Libc.EffectiveUid})", peer);
            Assert.True(await silent[0].DroppedAsync().WaitAsync(s_generous), "the oldest silent client gave up its slot");
        }
        finally
        {
            silent.ForEach(client => client.Dispose());
        }
    }

    [Fact]
    public async Task Clients_stalled_before_their_acknowledgement_give_their_slots_up_after_the_grace()
    {
        // Each stalled client holds a segment the server made for it: 64 of them must not keep newcomers out
        // for the whole connect timeout.
        ShmOptions options = _dir.Options() with { ConnectTimeout = Timeout.InfiniteTimeSpan, HandshakeGrace = TimeSpan.FromMilliseconds(200) };
        using ShmListener listener = ShmTransport.Listen("stalled", options);
        var failures = System.Threading.Channels.Channel.CreateUnbounded<(string Peer, Exception Error)>();
        listener.HandshakeFailed += (peer, error) => failures.Writer.TryWrite((peer, error));
        List<RawClient> stalled = await FillSlotsAsync(listener, client =>
        {
            client.SendHello();
            (byte status, _, Microsoft.Win32.SafeHandles.SafeFileHandle? memory) = client.ReceiveReply();
            Assert.Equal(Rendezvous.Handshake.Accepted, status);
            memory!.Dispose(); // never acknowledged
        });
        try
        {
            await AssertNewcomerIsServedAsync(listener);
            (_, Exception error) = await failures.Reader.ReadAsync().AsTask().WaitAsync(s_generous);
            Assert.IsType<TimeoutException>(error);
            Assert.Contains("ShmOptions.HandshakeGrace", error.Message);
            Assert.True(await stalled[0].DroppedAsync().WaitAsync(s_generous), "the oldest stalled client gave up its slot");
        }
        finally
        {
            stalled.ForEach(client => client.Dispose());
        }
    }

    /// <summary>Connects a real client to <paramref name="listener"/> and round-trips a frame through it.</summary>
    private async Task AssertNewcomerIsServedAsync(ShmListener listener)
    {
        Task<FrameChannel> accepting = Task.Run(() => listener.AcceptAsync().AsTask());
        using FrameChannel client = await ShmTransport.ConnectAsync(listener.Name, _dir.Options() with { ConnectTimeout = TimeSpan.FromSeconds(30) });
        using FrameChannel server = await accepting.WaitAsync(s_generous);
        server.Start(new EchoHandler(server));
        using var echo = new EchoClient(client);
        Assert.Equal([6, 4], echo.RoundTrip([6, 4]));
    }

    /// <summary>Takes every handshake slot of <paramref name="listener"/> with a raw client, oldest first, each
    /// brought as far as <paramref name="prepare"/> takes it; returns once the listener has accepted them all.</summary>
    private static async Task<List<RawClient>> FillSlotsAsync(ShmListener listener, Action<RawClient> prepare)
    {
        var clients = new List<RawClient>();
        try
        {
            for (int i = 0; i < 64; i++)
            {
                RawClient client = RawClient.Connect(listener.SocketPath);
                clients.Add(client);
                prepare(client);
            }
            bool full = await Task.Run(() => SpinWait.SpinUntil(() => listener.PendingHandshakes == 64, s_generous));
            Assert.True(full, $"{listener.PendingHandshakes} slots taken, not 64");
            return clients;
        }
        catch
        {
            clients.ForEach(client => client.Dispose());
            throw;
        }
    }
}
