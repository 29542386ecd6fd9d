using System.Net;
using System.Net.Sockets;

namespace XCall.Transport.Tcp;

/// <summary>
/// A listening TCP socket that hands out authenticated <see cref="FrameChannel"/>s. Handshakes (TLS,
/// pre-shared key, preamble) run in the background, several at once, each bounded by
/// <see cref="TcpOptions.ConnectTimeout"/>; a peer that fails one is closed, reported through
/// <see cref="HandshakeFailed"/> and never returned, and the listener keeps accepting. When all slots for
/// handshakes are taken, a newcomer takes the slot of a peer that has sent nothing, or of one whose handshake
/// has run longer than <see cref="TcpOptions.HandshakeGrace"/>, rather than wait behind it.
/// </summary>
public sealed class TcpChannelListener : IDisposable
{
    private readonly Socket _socket;
    private readonly TcpOptions _options;
    private readonly HandshakeQueue<TcpFrameChannel> _queue;

    internal TcpChannelListener(IPEndPoint endpoint, TcpOptions options)
    {
        _options = options;
        _socket = new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            _socket.Bind(endpoint);
            _socket.Listen(512);
        }
        catch
        {
            _socket.Dispose();
            throw;
        }
        LocalEndpoint = (IPEndPoint)_socket.LocalEndPoint!;
        // Blocking accepts and handshakes on threads of their own: accepted sockets must stay in blocking mode (see SocketLink).
        _queue = new HandshakeQueue<TcpFrameChannel>(
            _socket,
            Establish,
            new HandshakePolicy(
                options.ConnectTimeout,
                "TcpOptions.ConnectTimeout",
                options.HandshakeGrace,
                "TcpOptions.HandshakeGrace",
                "XCall tcp",
                peer => TcpTransport.FormatEndpoint(peer.RemoteEndPoint)));
        _queue.HandshakeFailed += (peer, error) => HandshakeFailed?.Invoke(peer, error);
    }

    /// <summary>The address and port the listener is bound to (the real port when 0 was asked for).</summary>
    public IPEndPoint LocalEndpoint { get; }

    /// <summary>Slots taken: handshakes running and channels not yet accepted (tests).</summary>
    internal int PendingHandshakes => _queue.SlotsTaken;

    /// <summary>True while an accepted connection waits for a slot that nobody may give up yet (tests).</summary>
    internal bool NewcomerWaits => _queue.NewcomerWaits;

    /// <summary>
    /// Raised, on the thread that ran its handshake, when a peer fails its handshake (TLS, pre-shared key, preamble, timeout,
    /// or its slot given to a newcomer, see <see cref="TcpOptions.HandshakeGrace"/>): the peer's address
    /// (<c>tcp://address:port</c>) and why. Exceptions thrown by handlers are ignored.
    /// </summary>
    public event Action<string, Exception>? HandshakeFailed;

    /// <summary>Waits for the next connection that completed its handshake.</summary>
    /// <exception cref="ObjectDisposedException">The listener is disposed.</exception>
    public async ValueTask<FrameChannel> AcceptAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            return await _queue.AcceptAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ObjectDisposedException)
        {
            throw new ObjectDisposedException(nameof(TcpChannelListener));
        }
    }

    /// <summary>Blocks until the next connection completed its handshake.</summary>
    /// <exception cref="ObjectDisposedException">The listener is disposed.</exception>
    public FrameChannel Accept()
    {
        ValueTask<FrameChannel> pending = AcceptAsync();
        return pending.IsCompleted ? pending.Result : pending.AsTask().GetAwaiter().GetResult();
    }

    /// <summary>
    /// Stops listening and closes the connections not accepted yet; handshakes under way are ended before
    /// this returns. Accepted channels stay open.
    /// </summary>
    public void Dispose() => _queue.Dispose();

    /// <summary>The server side of the handshake, once the peer's first byte is there; every wait ends when
    /// <paramref name="deadline"/> fires (the socket is closed).</summary>
    private TcpFrameChannel Establish(Socket socket, CancellationToken deadline)
    {
        string endpoint = TcpTransport.FormatEndpoint(socket.RemoteEndPoint);
        TcpLink link;
        using (deadline.UnsafeRegister(static s => ((Socket)s!).Dispose(), socket))
        {
            TcpTransport.Configure(socket, _options);
            link = TcpHandshake.Run(socket, isServer: true, targetHost: null, endpoint, _options);
        }
        // Disposing the registration waited for a callback in flight: past here the deadline cannot close the socket.
        if (deadline.IsCancellationRequested)
        {
            link.Dispose();
            deadline.ThrowIfCancellationRequested();
        }
        try
        {
            return new TcpFrameChannel(link, endpoint, _options);
        }
        catch
        {
            link.Dispose();
            throw;
        }
    }
}
