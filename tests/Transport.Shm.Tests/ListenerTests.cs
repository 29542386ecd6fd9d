using XCall.Transport.Shm.TestHost;
using XCall.Transport.Shm.Tests.Support;

namespace XCall.Transport.Shm.Tests;

/// <summary>The listener runs handshakes in the background: one slow or silent client holds up no one else.</summary>
public sealed class ListenerTests : IDisposable
{
    private static readonly TimeSpan s_generous = TimeSpan.FromSeconds(60);

    private readonly TestDirectory _dir = new();

    public void Dispose() => _dir.Dispose();

    [Fact]
    public async Task A_silent_client_does_not_block_the_next_client()
    {
        // No handshake deadline on the listener: before handshakes ran in the background, the silent client
        // held the accept loop forever.
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
}
