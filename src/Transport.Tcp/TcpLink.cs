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

    /// <summary>
    /// Ends the sending direction at once, so the peer reads every byte sent before it and then end of stream, and
    /// releases the socket (<see cref="Dispose"/>) once the peer has acknowledged those bytes, or after
    /// <paramref name="lingerMs"/>. A receive pending meanwhile goes on until bytes or the peer's close arrive.
    /// </summary>
    /// <remarks>
    /// Releasing the socket at once can lose bytes a sender was already told were sent: Linux answers with a reset,
    /// and drops the send queue, when a socket is closed with unread bytes in its receive queue, or when bytes
    /// arrive after its receiving direction was shut down (a peer's heartbeat, say). Until the bytes are
    /// acknowledged, this side therefore keeps its receiving direction open and its socket unreleased.
    /// </remarks>
    public void CloseAfterSent(int lingerMs)
    {
        try
        {
            Socket.Shutdown(SocketShutdown.Send);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            Dispose(); // reset or released already: nothing is left to deliver
            return;
        }
        if (lingerMs <= 0 || SentBytesAcknowledged(Socket))
        {
            Dispose();
            return;
        }
        Lingering.Start(this, Environment.TickCount64 + lingerMs);
    }

    /// <summary>
    /// True when the kernel holds no byte of ours the peer has not acknowledged (our end-of-stream included), or
    /// cannot tell: the connection's TCP state has left FIN-WAIT-1, CLOSING and LAST-ACK.
    /// </summary>
    internal static bool SentBytesAcknowledged(Socket socket)
    {
        const int IpProtoTcp = 6;
        const int TcpInfo = 11;
        const byte FinWait1 = 4;
        const byte LastAck = 9;
        const byte Closing = 11;
        Span<byte> info = stackalloc byte[8]; // tcp_info begins with tcpi_state
        try
        {
            if (socket.GetRawSocketOption(IpProtoTcp, TcpInfo, info) < 1)
            {
                return true;
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException or PlatformNotSupportedException)
        {
            return true;
        }
        return info[0] is not (FinWait1 or LastAck or Closing);
    }

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

/// <summary>Links closed with <see cref="TcpLink.CloseAfterSent"/> that wait for the peer to acknowledge their last bytes.</summary>
// Design: one timer per lingering link, re-armed with a growing period (1 ms doubling to 50 ms) until its bytes are
// acknowledged or its deadline passes; then the link is disposed, once. Nothing else touches the link meanwhile:
// its channel is closed, and a receive still pending on it ends when the dispose shuts the socket down.
internal static class Lingering
{
    private const int MaxPeriodMs = 50;

    public static void Start(TcpLink link, long deadline) => new Watch(link, deadline).Arm();

    private sealed class Watch(TcpLink link, long deadline)
    {
        private int _periodMs = 1;
        private Timer? _timer;

        public void Arm()
        {
            _timer = new Timer(static s => ((Watch)s!).Check(), this, Timeout.Infinite, Timeout.Infinite);
            _timer.Change(_periodMs, Timeout.Infinite);
        }

        private void Check()
        {
            if (!TcpLink.SentBytesAcknowledged(link.Socket) && Environment.TickCount64 < deadline)
            {
                _periodMs = Math.Min(_periodMs * 2, MaxPeriodMs);
                _timer!.Change(_periodMs, Timeout.Infinite);
                return;
            }
            _timer!.Dispose();
            link.Dispose();
        }
    }
}
