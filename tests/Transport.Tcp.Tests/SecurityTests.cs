using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

public sealed class SecurityTests
{
    private static readonly byte[] Key = RandomNumberGenerator.GetBytes(32);

    private static readonly Lazy<X509Certificate2> ServerCertificate = new(() => Certificates.CreateSelfSigned("localhost"));

    private static readonly Lazy<X509Certificate2> ClientCertificate = new(() => Certificates.CreateSelfSigned("xcall-client"));

    [Fact]
    public async Task Pre_shared_key_lets_a_client_with_the_right_key_in()
    {
        var options = new TcpOptions { Security = new TcpSecurity { PreSharedKey = Key } };
        using var server = new EchoServer(options);
        await AssertEchoesAsync(server.Port, options);
    }

    [Fact]
    public async Task Pre_shared_key_refuses_a_wrong_key_and_the_listener_keeps_serving()
    {
        var options = new TcpOptions { Security = new TcpSecurity { PreSharedKey = Key } };
        using var server = new EchoServer(options);
        var wrong = new TcpOptions { Security = new TcpSecurity { PreSharedKey = RandomNumberGenerator.GetBytes(32) } };

        Exception clientError = await Assert.ThrowsAnyAsync<Exception>(() => TcpTransport.ConnectAsync("127.0.0.1", server.Port, wrong));
        (_, Exception serverError) = await server.NextHandshakeFailureAsync();

        Assert.IsType<AuthenticationException>(serverError);
        Assert.Contains("pre-shared", serverError.Message);
        // The server checks the client's proof first and reveals nothing: the client sees the door close.
        Assert.True(clientError is XCallDisconnectedException or AuthenticationException, clientError.ToString());
        await AssertEchoesAsync(server.Port, options);
    }

    [Fact]
    public async Task Client_without_a_key_is_told_the_server_requires_one()
    {
        var options = new TcpOptions { Security = new TcpSecurity { PreSharedKey = Key } };
        using var server = new EchoServer(options);

        var error = await Assert.ThrowsAsync<AuthenticationException>(() => TcpTransport.ConnectAsync("127.0.0.1", server.Port));
        Assert.Contains("requires a pre-shared key", error.Message);
        await server.NextHandshakeFailureAsync();
        await AssertEchoesAsync(server.Port, options);
    }

    [Fact]
    public async Task Tls_works_when_the_client_pins_the_server_certificate()
    {
        using var server = new EchoServer(TlsServer());
        var client = new TcpOptions
        {
            Security = new TcpSecurity
            {
                ClientTls = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = Certificates.Pin(ServerCertificate.Value) },
            },
        };
        await AssertEchoesAsync(server.Port, client, host: "localhost");
    }

    [Fact]
    public async Task Tls_refuses_a_self_signed_certificate_under_default_validation()
    {
        using var server = new EchoServer(TlsServer());
        var client = new TcpOptions { Security = new TcpSecurity { ClientTls = new SslClientAuthenticationOptions() } };

        var error = await Assert.ThrowsAsync<AuthenticationException>(() => TcpTransport.ConnectAsync("localhost", server.Port, client));
        Assert.Contains("tcp://localhost:", error.Message);
        await server.NextHandshakeFailureAsync();
    }

    [Fact]
    public async Task Tls_with_a_required_client_certificate_refuses_a_client_without_one()
    {
        using var server = new EchoServer(TlsServer(requireClientCertificate: true));
        var client = new TcpOptions
        {
            Security = new TcpSecurity
            {
                ClientTls = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = Certificates.Pin(ServerCertificate.Value) },
            },
        };

        // TLS 1.3 lets the client finish before the server judges its certificate; the refusal then shows up
        // as the server closing the connection during the rest of the handshake.
        Exception error = await Assert.ThrowsAnyAsync<Exception>(() => TcpTransport.ConnectAsync("localhost", server.Port, client));
        Assert.True(error is AuthenticationException or XCallDisconnectedException, error.ToString());
        (_, Exception serverError) = await server.NextHandshakeFailureAsync();
        Assert.IsType<AuthenticationException>(serverError);
    }

    [Fact]
    public async Task Tls_with_a_required_client_certificate_accepts_the_pinned_client()
    {
        using var server = new EchoServer(TlsServer(requireClientCertificate: true));
        var client = new TcpOptions
        {
            Security = new TcpSecurity
            {
                ClientTls = new SslClientAuthenticationOptions
                {
                    RemoteCertificateValidationCallback = Certificates.Pin(ServerCertificate.Value),
                    ClientCertificates = [ClientCertificate.Value],
                },
            },
        };
        await AssertEchoesAsync(server.Port, client, host: "localhost");
    }

    [Fact]
    public async Task Tls_and_pre_shared_key_work_together()
    {
        TcpOptions serverOptions = TlsServer() with { Security = TlsServer().Security! with { PreSharedKey = Key } };
        using var server = new EchoServer(serverOptions);
        var client = new TcpOptions
        {
            Security = new TcpSecurity
            {
                PreSharedKey = Key,
                ClientTls = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = Certificates.Pin(ServerCertificate.Value) },
            },
        };
        await AssertEchoesAsync(server.Port, client, host: "localhost");
    }

    [Fact]
    public async Task Plain_client_gets_a_clear_error_from_a_tls_server()
    {
        using var server = new EchoServer(TlsServer());
        Exception error = await Assert.ThrowsAnyAsync<Exception>(() => TcpTransport.ConnectAsync("127.0.0.1", server.Port));
        Assert.True(error is XCallProtocolException or XCallDisconnectedException, error.ToString());
        await server.NextHandshakeFailureAsync();
    }

    [Fact]
    public void Short_pre_shared_key_is_rejected_up_front()
    {
        var options = new TcpOptions { Security = new TcpSecurity { PreSharedKey = new byte[8] } };
        Assert.Throws<ArgumentException>(() => TcpTransport.Listen(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0), options));
    }

    private static TcpOptions TlsServer(bool requireClientCertificate = false) => new()
    {
        Security = new TcpSecurity
        {
            ServerTls = new SslServerAuthenticationOptions
            {
                ServerCertificate = ServerCertificate.Value,
                ClientCertificateRequired = requireClientCertificate,
                RemoteCertificateValidationCallback = requireClientCertificate
                    ? Certificates.Pin(ClientCertificate.Value)
                    : null,
            },
        },
    };

    private static async Task AssertEchoesAsync(int port, TcpOptions options, string host = "127.0.0.1")
    {
        using FrameChannel channel = await TcpTransport.ConnectAsync(host, port, options);
        var replies = new ReplyCollector();
        channel.Start(replies);
        foreach (int size in new[] { 0, 4, 100_000 })
        {
            byte[] payload = Frames.Payload(size, seed: size);
            Assert.Equal(payload, await Frames.CallAsync(channel, replies, (ulong)size + 1, payload));
        }

        // Pipelined: batched writes from a pool thread one way, held replies the other, through the same stream.
        const int Pipelined = 2_000;
        const ulong FirstId = 1_000_000;
        var pending = new Task<byte[]>[Pipelined];
        for (int i = 0; i < Pipelined; i++)
        {
            pending[i] = replies.Reply(FirstId + (ulong)i);
        }
        for (int i = 0; i < Pipelined; i++)
        {
            Frames.Send(channel, FrameKind.Call, FirstId + (ulong)i, Frames.Payload(i % 300, seed: i), batched: true);
        }
        byte[][] results = await Task.WhenAll(pending).WaitAsync(Timeouts.Long);
        for (int i = 0; i < Pipelined; i++)
        {
            Assert.Equal(Frames.Payload(i % 300, seed: i), results[i]);
        }
    }
}
