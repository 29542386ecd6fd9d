using System.Net.Security;
using System.Net.Sockets;

namespace XCall.Transport.Tcp;

/// <summary>TLS: frames go through an <see cref="SslStream"/> (one reader and one writer may use it at once).</summary>
internal sealed class SslStreamLink(Socket socket, SslStream stream) : TcpLink(socket)
{
    public override int Receive(Span<byte> buffer) => stream.Read(buffer);

    public override void Send(ReadOnlySpan<byte> data) => stream.Write(data);

    public override void Dispose()
    {
        base.Dispose();
        try
        {
            stream.Dispose();
        }
        catch (IOException)
        {
            // The socket is already gone; nothing more to release.
        }
    }
}
