using System.Net.Sockets;

namespace XCall.Transport.Tcp;

/// <summary>Plain TCP: blocking system calls straight on the socket, no stream in between.</summary>
/// <remarks>
/// The socket must never have run an asynchronous operation: .NET then switches the handle to non-blocking
/// mode for good and emulates blocking calls through its epoll thread, which costs a thread wake-up per
/// receive. Connections are therefore established with blocking calls (<see cref="TcpHandshake"/>).
/// </remarks>
internal sealed class SocketLink(Socket socket) : TcpLink(socket)
{
    public override int Receive(Span<byte> buffer)
    {
        int n = Socket.Receive(buffer, SocketFlags.None, out SocketError error);
        if (error != SocketError.Success)
        {
            throw new SocketException((int)error);
        }
        return n;
    }

    /// <summary><see cref="ReceiveIfReady"/>: nothing has arrived yet.</summary>
    public const int NothingYet = -1;

    /// <summary><see cref="ReceiveIfReady"/>: the receive failed; a blocking <see cref="Receive"/> reports why.</summary>
    public const int Failed = -2;

    /// <summary>
    /// Receives what has arrived without blocking: the count of bytes (at least one), 0 when the peer closed its side,
    /// <see cref="NothingYet"/> or <see cref="Failed"/>.
    /// </summary>
    public int ReceiveIfReady(Span<byte> buffer)
    {
        if (OperatingSystem.IsLinux())
        {
            return Interop.Libc.ReceiveNow(Socket.SafeHandle, buffer);
        }
        return Socket.Available > 0 ? Receive(buffer) : NothingYet;
    }

    public override void Send(ReadOnlySpan<byte> data)
    {
        while (!data.IsEmpty)
        {
            int n = Socket.Send(data, SocketFlags.None, out SocketError error);
            if (error != SocketError.Success)
            {
                throw new SocketException((int)error);
            }
            data = data[n..];
        }
    }

    public override void Send(List<ArraySegment<byte>> segments)
    {
        long total = 0;
        foreach (ArraySegment<byte> s in segments)
        {
            total += s.Count;
        }
        int sent = Socket.Send(segments, SocketFlags.None, out SocketError error);
        if (error != SocketError.Success)
        {
            throw new SocketException((int)error);
        }
        if (sent == total)
        {
            return;
        }
        // A blocking gather write returned early (a signal, a timeout): send what is left piece by piece.
        long skip = sent;
        foreach (ArraySegment<byte> s in segments)
        {
            if (skip >= s.Count)
            {
                skip -= s.Count;
                continue;
            }
            Send(s.AsSpan((int)skip));
            skip = 0;
        }
    }
}
