using System.Net.Security;

namespace XCall.Transport.Tcp;

/// <summary>
/// How TCP connections authenticate: TLS, a pre-shared key, or both. One instance may serve both sides:
/// a listener uses <see cref="ServerTls"/>, a connecting client uses <see cref="ClientTls"/>, and both use
/// <see cref="PreSharedKey"/>.
/// </summary>
/// <remarks>
/// Without TLS, the pre-shared key proves who the peer is when the connection opens, but the frames that
/// follow travel in clear and are not protected against tampering: use TLS on any network you do not control.
/// </remarks>
public sealed record TcpSecurity
{
    /// <summary>
    /// TLS settings of the listening side (its certificate, whether a client certificate is required and
    /// how it is checked); null means the listener does not speak TLS.
    /// </summary>
    public SslServerAuthenticationOptions? ServerTls { get; init; }

    /// <summary>
    /// TLS settings of the connecting side; null means the client does not speak TLS. The server's certificate
    /// is validated against the system's trust store and the host name unless
    /// <see cref="SslClientAuthenticationOptions.RemoteCertificateValidationCallback"/> says otherwise (for
    /// example to pin a thumbprint). <see cref="SslClientAuthenticationOptions.TargetHost"/> defaults to the host
    /// passed to <see cref="TcpTransport.ConnectAsync"/>; client certificates go in
    /// <see cref="SslClientAuthenticationOptions.ClientCertificates"/>.
    /// </summary>
    public SslClientAuthenticationOptions? ClientTls { get; init; }

    /// <summary>
    /// A secret both sides hold (at least 16 bytes; 32 random bytes recommended). When set, each side proves it
    /// knows the key with HMAC-SHA256 over fresh random nonces from both sides, and a peer that fails is
    /// disconnected. Works with or without TLS; both sides must set it.
    /// </summary>
    public byte[]? PreSharedKey { get; init; }

    internal void Validate()
    {
        if (PreSharedKey is { Length: < 16 })
        {
            throw new ArgumentException("PreSharedKey must be at least 16 bytes long.", nameof(PreSharedKey));
        }
    }
}
