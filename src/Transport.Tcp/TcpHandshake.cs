using System.Buffers.Binary;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography;

namespace XCall.Transport.Tcp;

/// <summary>
/// Opens a connection, in order: TLS (when configured), the pre-shared-key proofs (when configured), then
/// the transport preamble both ways. src/Transport.Tcp/README.md, "Handshake".
/// </summary>
/// <remarks>
/// Everything here uses blocking calls on purpose: a socket that ever ran an asynchronous operation stays
/// non-blocking underneath for good, and .NET then emulates every blocking receive through its epoll
/// thread (see <see cref="SocketLink"/>). Timeouts are enforced by the caller, which disposes the socket
/// when the deadline passes; that unblocks whatever call is pending here.
/// <para>Pre-shared key: each side sends "XPSK" and a fresh 32-byte random nonce; the client then sends
/// HMAC-SHA256(key, "XCall PSK v1 client" ‖ client nonce ‖ server nonce); the server checks it and only then
/// answers with the same over "XCall PSK v1 server", which the client checks. The role labels stop a proof
/// from being reflected back, the fresh nonces stop replays, and the server reveals nothing to a client
/// that does not know the key.</para>
/// </remarks>
internal static class TcpHandshake
{
    private const int NonceSize = 32;
    private const int ProofSize = 32;
    private const uint PskMagic = 0x4B535058; // 'X' 'P' 'S' 'K' read little-endian

    private static ReadOnlySpan<byte> ClientLabel => "XCall PSK v1 client"u8;

    private static ReadOnlySpan<byte> ServerLabel => "XCall PSK v1 server"u8;

    /// <summary>
    /// Runs one side of the handshake on a connected blocking socket and returns the link to frame on;
    /// <paramref name="targetHost"/> is the host the client connected to (the TLS server name), null on the server.
    /// </summary>
    public static TcpLink Run(Socket socket, bool isServer, string? targetHost, string endpoint, TcpOptions options)
    {
        Stream stream = new NetworkStream(socket, ownsSocket: false);
        SslStream? ssl = null;
        try
        {
            TcpSecurity? security = options.Security;
            if (isServer ? security?.ServerTls is not null : security?.ClientTls is not null)
            {
                ssl = new SslStream(stream, leaveInnerStreamOpen: false);
                AuthenticateTls(ssl, isServer, security!, targetHost, endpoint);
                stream = ssl;
            }
            if (security?.PreSharedKey is { } key)
            {
                ProveKey(stream, key, isServer, endpoint);
            }
            ExchangePreamble(stream, endpoint);
            return ssl is null ? new SocketLink(socket) : new SslStreamLink(socket, ssl);
        }
        catch (Exception ex)
        {
            ssl?.Dispose();
            stream.Dispose();
            throw Translate(ex, endpoint);
        }
    }

    private static void AuthenticateTls(SslStream ssl, bool isServer, TcpSecurity security, string? targetHost, string endpoint)
    {
        try
        {
            if (isServer)
            {
                ssl.AuthenticateAsServer(security.ServerTls!);
            }
            else
            {
                ssl.AuthenticateAsClient(WithTargetHost(security.ClientTls!, targetHost));
            }
        }
        catch (AuthenticationException ex)
        {
            throw new AuthenticationException($"TLS with {endpoint} failed: {ex.Message}", ex);
        }
    }

    /// <summary>The client options with <see cref="SslClientAuthenticationOptions.TargetHost"/> filled in, without touching the caller's instance.</summary>
    private static SslClientAuthenticationOptions WithTargetHost(SslClientAuthenticationOptions options, string? targetHost)
    {
        if (options.TargetHost is not null || targetHost is null)
        {
            return options;
        }
        var copy = new SslClientAuthenticationOptions
        {
            AllowRenegotiation = options.AllowRenegotiation,
            AllowTlsResume = options.AllowTlsResume,
            ApplicationProtocols = options.ApplicationProtocols,
            CertificateChainPolicy = options.CertificateChainPolicy,
            CertificateRevocationCheckMode = options.CertificateRevocationCheckMode,
            CipherSuitesPolicy = options.CipherSuitesPolicy,
            ClientCertificateContext = options.ClientCertificateContext,
            ClientCertificates = options.ClientCertificates,
            EnabledSslProtocols = options.EnabledSslProtocols,
            EncryptionPolicy = options.EncryptionPolicy,
            LocalCertificateSelectionCallback = options.LocalCertificateSelectionCallback,
            RemoteCertificateValidationCallback = options.RemoteCertificateValidationCallback,
            TargetHost = targetHost,
        };
        if (OperatingSystem.IsLinux() || OperatingSystem.IsWindows())
        {
            copy.AllowRsaPkcs1Padding = options.AllowRsaPkcs1Padding;
            copy.AllowRsaPssPadding = options.AllowRsaPssPadding;
        }
        return copy;
    }

    private static void ProveKey(Stream stream, byte[] key, bool isServer, string endpoint)
    {
        Span<byte> ours = stackalloc byte[sizeof(uint) + NonceSize];
        BinaryPrimitives.WriteUInt32LittleEndian(ours, PskMagic);
        RandomNumberGenerator.Fill(ours[sizeof(uint)..]);
        stream.Write(ours);

        Span<byte> theirs = stackalloc byte[sizeof(uint) + NonceSize];
        stream.ReadExactly(theirs[..sizeof(uint)]);
        uint magic = BinaryPrimitives.ReadUInt32LittleEndian(theirs);
        if (magic != PskMagic)
        {
            throw new AuthenticationException(magic == FrameCodec.PreambleMagic
                ? $"{endpoint} does not use a pre-shared key, but this side requires one (TcpSecurity.PreSharedKey)."
                : $"{endpoint} did not start pre-shared-key authentication (first bytes {Convert.ToHexString(theirs[..sizeof(uint)])}).");
        }
        stream.ReadExactly(theirs[sizeof(uint)..]);

        ReadOnlySpan<byte> clientNonce = isServer ? theirs[sizeof(uint)..] : ours[sizeof(uint)..];
        ReadOnlySpan<byte> serverNonce = isServer ? ours[sizeof(uint)..] : theirs[sizeof(uint)..];
        Span<byte> clientProof = stackalloc byte[ProofSize];
        Span<byte> serverProof = stackalloc byte[ProofSize];
        Proof(key, ClientLabel, clientNonce, serverNonce, clientProof);
        Proof(key, ServerLabel, clientNonce, serverNonce, serverProof);

        Span<byte> received = stackalloc byte[ProofSize];
        if (isServer)
        {
            stream.ReadExactly(received);
            Check(received, clientProof, endpoint);
            stream.Write(serverProof);
        }
        else
        {
            stream.Write(clientProof);
            stream.ReadExactly(received);
            Check(received, serverProof, endpoint);
        }
        CryptographicOperations.ZeroMemory(clientProof);
        CryptographicOperations.ZeroMemory(serverProof);
    }

    private static void Proof(byte[] key, ReadOnlySpan<byte> label, ReadOnlySpan<byte> clientNonce, ReadOnlySpan<byte> serverNonce, Span<byte> proof)
    {
        Span<byte> message = stackalloc byte[64 + 2 * NonceSize];
        label.CopyTo(message);
        clientNonce.CopyTo(message[label.Length..]);
        serverNonce.CopyTo(message[(label.Length + NonceSize)..]);
        HMACSHA256.HashData(key, message[..(label.Length + 2 * NonceSize)], proof);
    }

    private static void Check(ReadOnlySpan<byte> received, ReadOnlySpan<byte> expected, string endpoint)
    {
        if (!CryptographicOperations.FixedTimeEquals(received, expected))
        {
            throw new AuthenticationException($"{endpoint} failed pre-shared-key authentication: its proof does not match this side's key.");
        }
    }

    private static void ExchangePreamble(Stream stream, string endpoint)
    {
        Span<byte> ours = stackalloc byte[FrameCodec.PreambleSize];
        FrameCodec.WritePreamble(ours);
        stream.Write(ours);

        Span<byte> theirs = stackalloc byte[FrameCodec.PreambleSize];
        stream.ReadExactly(theirs[..sizeof(uint)]);
        uint magic = BinaryPrimitives.ReadUInt32LittleEndian(theirs);
        if (magic != FrameCodec.PreambleMagic)
        {
            if (magic == PskMagic)
            {
                throw new AuthenticationException($"{endpoint} requires a pre-shared key, but this side has none (TcpSecurity.PreSharedKey).");
            }
            string hint = theirs[0] is 0x15 or 0x16 ? " (that looks like TLS: configure TcpSecurity on both sides alike)" : "";
            throw new XCallProtocolException($"{endpoint} is not an XCall TCP endpoint: it sent {Convert.ToHexString(theirs[..sizeof(uint)])} where 'XCAL' was expected{hint}.");
        }
        stream.ReadExactly(theirs[sizeof(uint)..]);
        ushort version = BinaryPrimitives.ReadUInt16LittleEndian(theirs[4..]);
        if (version != FrameCodec.TransportVersion)
        {
            throw new XCallProtocolException($"{endpoint} speaks XCall TCP transport version {version}; this build speaks version {FrameCodec.TransportVersion}.");
        }
        ushort reserved = BinaryPrimitives.ReadUInt16LittleEndian(theirs[6..]);
        if (reserved != 0)
        {
            // Zero in this version: a peer that sets it speaks something this build does not know.
            throw new XCallProtocolException($"{endpoint} sent 0x{reserved:x4} in the preamble's reserved field, which is zero in XCall TCP transport version {FrameCodec.TransportVersion}.");
        }
    }

    private static Exception Translate(Exception error, string endpoint) => error switch
    {
        EndOfStreamException => new XCallDisconnectedException(endpoint,
            "the peer closed the connection during the handshake (wrong key or certificate, a TLS mismatch, or not an XCall endpoint?)", error),
        IOException or SocketException => new XCallDisconnectedException(endpoint, $"the handshake failed: {error.Message}", error),
        _ => error,
    };
}
