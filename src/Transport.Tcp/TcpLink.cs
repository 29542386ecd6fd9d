using System.Net.Sockets;

namespace XCall.Transport.Tcp;

/// <summary>
/// The byte stream under a <see cref="TcpFrameChannel"/>: the socket itself, or TLS over it. One thread
/// receives and one thread sends at a time; both calls block.
/// </summary>
internal abstract class TcpLink : IDisposable
{
    protected TcpLink(Socket socket) => Socket = socket;

    public Socket Socket { get; }

    /// <summary>Receives at least one byte into <paramref name="buffer"/>; 0 means the peer closed its side.</summary>
    public abstract int Receive(Span<byte> buffer);

    /// <summary>Sends all of <paramref name="data"/>; blocks while the socket's send buffer is full.</summary>
    public abstract void Send(ReadOnlySpan<byte> data);

    /// <summary>Sends the segments in order, as one write where the link allows it.</summary>
    public virtual void Send(List<ArraySegment<byte>> segments)
    {
        foreach (ArraySegment<byte> segment in segments)
        {
            Send(segment.AsSpan());
        }
    }

    /// <summary>Makes later sends give up after <paramref name="timeoutMs"/> (for a last word before closing).</summary>
    public void LimitSendTime(int timeoutMs) => Socket.SendTimeout = timeoutMs;

    /// <summary>Closes both directions (the peer sees end of stream) and releases the socket; unblocks a pending receive.</summary>
    public virtual void Dispose()
    {
        try
        {
            Socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
            // Already reset or never fully connected: closing is all that is left.
        }
        catch (ObjectDisposedException)
        {
        }
        Socket.Dispose();
    }
}
