using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

/// <summary>
/// A listener runs at most 64 handshakes at once: peers that hold a slot without finishing (silent, or
/// stalled halfway) give it up to newcomers instead of locking every new client out for their whole
/// <see cref="TcpOptions.ConnectTimeout"/>.
/// </summary>
public sealed class HandshakeSlotTests
{
    private const int Slots = 64;

    private static readonly Lazy<X509Certificate2> ServerCertificate = new(() => Certificates.CreateSelfSigned("localhost"));

    [Fact]
    public async Task Silent_connections_do_not_lock_other_clients_out()
    {
        using var server = new EchoServer(new TcpOptions { ConnectTimeout = TimeSpan.FromSeconds(10) });
        List<RawPeer> silent = await FillSlotsAsync(server, firstBytes: []);
        try
        {
            using FrameChannel good = await TcpTransport.ConnectAsync("127.0.0.1", server.Port, new TcpOptions { ConnectTimeout = TimeSpan.FromSeconds(3) });
            await AssertEchoesAsync(good);

            (string peer, Exception error) = await server.NextHandshakeFailureAsync();
            Assert.IsType<TimeoutException>(error);
            Assert.Contains("sent nothing", error.Message);
            Assert.Equal($"tcp://{silent[0].Socket.LocalEndPoint}", peer); // the oldest
            Assert.True(await silent[0].WaitForCloseAsync());
        }
        finally
        {
            silent.ForEach(peer => peer.Dispose());
        }
    }

    [Fact]
    public async Task Clients_stalled_in_the_tls_handshake_give_their_slots_up_to_newcomers()
    {
        var serverOptions = new TcpOptions
        {
            ConnectTimeout = TimeSpan.FromSeconds(20),
            Security = new TcpSecurity { ServerTls = new SslServerAuthenticationOptions { ServerCertificate = ServerCertificate.Value } },
        };
        using var server = new EchoServer(serverOptions);
        // A TLS record header announcing a 512-byte ClientHello, then 16 bytes of it and no more.
        List<RawPeer> stalled = await FillSlotsAsync(server, firstBytes: [0x16, 0x03, 0x01, 0x02, 0x00, .. new byte[16]]);
        try
        {
            var client = new TcpOptions
            {
                ConnectTimeout = TimeSpan.FromSeconds(10),
                Security = new TcpSecurity
                {
                    ClientTls = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = Certificates.Pin(ServerCertificate.Value) },
                },
            };
            using FrameChannel good = await TcpTransport.ConnectAsync("localhost", server.Port, client);
            await AssertEchoesAsync(good);

            (string peer, Exception error) = await server.NextHandshakeFailureAsync();
            Assert.IsType<TimeoutException>(error);
            Assert.Contains("HandshakeGrace", error.Message);
            Assert.Equal($"tcp://{stalled[0].Socket.LocalEndPoint}", peer);
        }
        finally
        {
            stalled.ForEach(peer => peer.Dispose());
        }
    }

    [Fact]
    public async Task Peers_that_have_spoken_keep_their_slots_while_the_grace_lasts()
    {
        var options = new TcpOptions { ConnectTimeout = Timeouts.Long, HandshakeGrace = Timeout.InfiniteTimeSpan };
        using var server = new EchoServer(options);
        List<RawPeer> slow = await FillSlotsAsync(server, firstBytes: RawPeer.Preamble()[..4]); // spoken, not done
        try
        {
            Task<FrameChannel> newcomer = TcpTransport.ConnectAsync("127.0.0.1", server.Port, options);
            bool waiting = await Task.Run(() => SpinWait.SpinUntil(() => server.Listener.NewcomerWaits, Timeouts.Long));
            Assert.True(waiting, "the newcomer never waited for a slot");
            Assert.Equal(0, server.HandshakeFailureCount);

            // Each slow peer finishes and is served; then the newcomer gets a slot freed by one of them.
            foreach (RawPeer peer in slow)
            {
                await peer.SendAsync(RawPeer.Preamble()[4..]);
                Assert.Equal(RawPeer.Preamble(), await peer.ReceiveExactlyAsync(8).WaitAsync(Timeouts.Long));
                await server.NextAcceptedAsync();
            }
            using FrameChannel channel = await newcomer.WaitAsync(Timeouts.Long);
            await AssertEchoesAsync(channel);
            Assert.Equal(0, server.HandshakeFailureCount);
        }
        finally
        {
            slow.ForEach(peer => peer.Dispose());
        }
    }

    /// <summary>Takes every slot of <paramref name="server"/> with a raw peer that sends <paramref name="firstBytes"/>
    /// and no more, oldest first; returns once the listener has accepted them all.</summary>
    private static async Task<List<RawPeer>> FillSlotsAsync(EchoServer server, byte[] firstBytes)
    {
        var peers = new List<RawPeer>();
        try
        {
            for (int i = 0; i < Slots; i++)
            {
                RawPeer peer = await RawPeer.ConnectAsync(server.Port);
                peers.Add(peer);
                if (firstBytes.Length > 0)
                {
                    await peer.SendAsync(firstBytes);
                }
            }
            bool full = await Task.Run(() => SpinWait.SpinUntil(() => server.Listener.PendingHandshakes == Slots, Timeouts.Long));
            Assert.True(full, $"{server.Listener.PendingHandshakes} slots taken, not {Slots}");
            return peers;
        }
        catch
        {
            peers.ForEach(peer => peer.Dispose());
            throw;
        }
    }

    private static async Task AssertEchoesAsync(FrameChannel channel)
    {
        var replies = new ReplyCollector();
        channel.Start(replies);
        byte[] payload = Frames.Payload(1000, seed: 1);
        Assert.Equal(payload, await Frames.CallAsync(channel, replies, 1, payload));
    }
}
