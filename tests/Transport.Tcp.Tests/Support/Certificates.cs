using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace XCall.Transport.Tcp.Tests.Support;

internal static class Certificates
{
    /// <summary>
    /// A self-signed RSA certificate for localhost / 127.0.0.1, usable for server and client authentication.
    /// Exported and re-imported as PFX: on Linux, SslStream needs the private key in that form.
    /// </summary>
    public static X509Certificate2 CreateSelfSigned(string subject = "localhost")
    {
        using RSA rsa = RSA.Create(2048);
        var request = new CertificateRequest($"CN={subject}", rsa, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature | X509KeyUsageFlags.KeyEncipherment, false));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(
            [new Oid("1.3.6.1.5.5.7.3.1"), new Oid("1.3.6.1.5.5.7.3.2")], false));
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName(subject);
        names.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        using X509Certificate2 created = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        return X509CertificateLoader.LoadPkcs12(created.Export(X509ContentType.Pfx, ""), "", X509KeyStorageFlags.Exportable);
    }

    /// <summary>A validation callback that accepts exactly <paramref name="pinned"/> (by SHA-256 of the certificate).</summary>
    public static System.Net.Security.RemoteCertificateValidationCallback Pin(X509Certificate2 pinned)
    {
        byte[] expected = pinned.GetCertHash(HashAlgorithmName.SHA256);
        return (_, certificate, _, _) => certificate is not null && certificate.GetCertHash(HashAlgorithmName.SHA256).AsSpan().SequenceEqual(expected);
    }
}
