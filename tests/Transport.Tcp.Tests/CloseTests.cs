using System.Net;
using System.Net.Sockets;

namespace XCall.Transport.Tcp.Tests;

/// <summary>
/// Closing a link (<see cref="TcpLink.CloseAfterSent"/>) loses none of the bytes already handed to the socket, even
/// when the peer is not reading yet and has sent bytes this side never read: a plain close would answer with a
/// reset there and drop the send queue.
/// </summary>
public sealed class CloseTests
{
    private static readonly TimeSpan s_generous = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData("no bytes")]
    [InlineData("a byte before the close")] // a socket closed with unread bytes resets
    [InlineData("a byte after the close")] // a socket whose receiving side is shut down resets when bytes arrive (a heartbeat, say)
    public async Task Bytes_sent_before_a_close_reach_a_peer_that_reads_them_only_afterwards(string peerSends)
    {
        const int Size = 256 * 1024;
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.ReceiveBufferSize = 4096; // inherited by the accepted socket: a small window keeps our bytes queued on our side
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { SendBufferSize = 4 * 1024 * 1024 };
        client.Connect(listener.LocalEndPoint!);
        using Socket server = listener.Accept();
        var link = new SocketLink(client);

        byte[] data = new byte[Size];
        new Random(7).NextBytes(data);
        await Task.Run(() => link.Send(data)).WaitAsync(s_generous); // fits in the client's send buffer: returns unread
        Assert.True(BytesNotAcknowledged(client) > 0, "the peer acknowledged everything before the close: the test would show nothing");
        if (peerSends == "a byte before the close")
        {
            server.Send([42]);
            await WaitUntil(() => client.Available == 1);
        }

        link.CloseAfterSent(lingerMs: 30_000);
        if (peerSends == "a byte after the close")
        {
            server.Send([42]);
        }

        byte[] received = new byte[Size + 1];
        int total = await Task.Run(() =>
        {
            int n, got = 0;
            while ((n = server.Receive(received.AsSpan(got))) > 0)
            {
                got += n;
            }
            return got;
        }).WaitAsync(s_generous);
        Assert.Equal(Size, total);
        Assert.True(data.AsSpan().SequenceEqual(received.AsSpan(0, Size)), "the bytes arrived changed");
        // The link lets go of its socket once the peer has them all.
        await WaitUntil(() => link.Socket.SafeHandle.IsClosed);
    }

    [Fact]
    public void A_close_with_no_linger_releases_the_socket_at_once()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        client.Connect(listener.LocalEndPoint!);
        using Socket server = listener.Accept();
        var link = new SocketLink(client);

        link.CloseAfterSent(lingerMs: 0);

        Assert.True(client.SafeHandle.IsClosed);
        Assert.Equal(0, server.Receive(new byte[1])); // the peer sees the end of the stream
    }

    /// <summary>Bytes of the socket's send queue the peer has not acknowledged: tcp_info's unacked segments times the MSS, plus its not-sent bytes.</summary>
    private static long BytesNotAcknowledged(Socket socket)
    {
        Span<byte> info = stackalloc byte[160];
        Assert.True(socket.GetRawSocketOption(6 /* IPPROTO_TCP */, 11 /* TCP_INFO */, info) >= 148, "TCP_INFO is too short on this kernel");
        uint mss = BitConverter.ToUInt32(info[16..]);
        uint unackedSegments = BitConverter.ToUInt32(info[24..]);
        uint notSent = BitConverter.ToUInt32(info[144..]);
        return (long)unackedSegments * mss + notSent;
    }

    private static async Task WaitUntil(Func<bool> condition)
    {
        var until = DateTime.UtcNow + s_generous;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < until, "the condition did not hold within 30 s");
            await Task.Yield();
        }
    }
}
