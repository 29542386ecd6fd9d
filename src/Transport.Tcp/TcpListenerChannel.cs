using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;

namespace XCall.Transport.Tcp;

/// <summary>
/// A listening TCP socket that hands out authenticated <see cref="FrameChannel"/>s. Handshakes (TLS,
/// pre-shared key, preamble) run in the background, several at once, each bounded by
/// <see cref="TcpOptions.ConnectTimeout"/>; a peer that fails one is closed, reported through
/// <see cref="HandshakeFailed"/> and never returned, and the listener keeps accepting.
/// </summary>
public sealed class TcpListenerChannel : IDisposable
{
    /// <summary>Connections accepted but not yet taken by <see cref="AcceptAsync"/>, handshakes included.</summary>
    private const int MaxPending = 64;

    private readonly Socket _socket;
    private readonly TcpOptions _options;
    private readonly Channel<TcpFrameChannel> _ready = Channel.CreateUnbounded<TcpFrameChannel>(new UnboundedChannelOptions { SingleWriter = false });
    private readonly SemaphoreSlim _pendingSlots = new(MaxPending, MaxPending);
    private readonly CancellationTokenSource _stop = new();
    private readonly Thread _acceptThread;
    private int _disposed;

    internal TcpListenerChannel(IPEndPoint endpoint, TcpOptions options)
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
        // A blocking accept on a thread of its own: accepted sockets must stay in blocking mode (see SocketLink).
        _acceptThread = new Thread(static s => ((TcpListenerChannel)s!).AcceptLoop())
        {
            IsBackground = true,
            Name = "XCall tcp accept",
        };
        _acceptThread.UnsafeStart(this);
    }

    /// <summary>The address and port the listener is bound to (the real port when 0 was asked for).</summary>
    public IPEndPoint LocalEndpoint { get; }

    /// <summary>
    /// Raised, on the thread that ran its handshake, when a peer fails its handshake (TLS, pre-shared key, preamble, timeout):
    /// the peer's address (<c>tcp://address:port</c>) and why. Exceptions thrown by handlers are ignored.
    /// </summary>
    public event Action<string, Exception>? HandshakeFailed;

    /// <summary>Waits for the next connection that completed its handshake.</summary>
    /// <exception cref="ObjectDisposedException">The listener is disposed.</exception>
    public async ValueTask<FrameChannel> AcceptAsync(CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        TcpFrameChannel channel;
        try
        {
            channel = await _ready.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            throw new ObjectDisposedException(nameof(TcpListenerChannel));
        }
        _pendingSlots.Release();
        return channel;
    }

    /// <summary>Blocks until the next connection completed its handshake.</summary>
    /// <exception cref="ObjectDisposedException">The listener is disposed.</exception>
    public FrameChannel Accept()
    {
        ValueTask<FrameChannel> pending = AcceptAsync();
        return pending.IsCompleted ? pending.Result : pending.AsTask().GetAwaiter().GetResult();
    }

    /// <summary>Stops listening and closes the connections not accepted yet; accepted channels stay open.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        _stop.Cancel();
        _socket.Dispose();
        _ready.Writer.TryComplete();
        while (_ready.Reader.TryRead(out TcpFrameChannel? channel))
        {
            channel.Dispose();
        }
        if (Thread.CurrentThread != _acceptThread)
        {
            _acceptThread.Join(TimeSpan.FromSeconds(5));
        }
        _stop.Dispose();
    }

    private void AcceptLoop()
    {
        CancellationToken stop = _stop.Token;
        while (true)
        {
            Socket socket;
            try
            {
                _pendingSlots.Wait(stop);
                socket = _socket.Accept();
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException || stop.IsCancellationRequested)
            {
                return;
            }
            catch (SocketException)
            {
                // The peer reset before we took it, or a transient shortage (file descriptors): keep listening.
                _pendingSlots.Release();
                continue;
            }
            // Blocking handshake on a thread of its own (see DedicatedThread); at most MaxPending at once.
            DedicatedThread.Run(() => Establish(socket), "XCall tcp handshake");
        }
    }

    private void Establish(Socket socket)
    {
        string endpoint = TcpTransport.FormatEndpoint(SafeRemoteEndPoint(socket));
        TcpFrameChannel? channel = null;
        try
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(_stop.Token);
            if (_options.ConnectTimeout != Timeout.InfiniteTimeSpan)
            {
                deadline.CancelAfter(_options.ConnectTimeout);
            }
            TcpLink link;
            using (deadline.Token.UnsafeRegister(static s => ((Socket)s!).Dispose(), socket))
            {
                try
                {
                    TcpTransport.Configure(socket, _options);
                    link = TcpHandshake.Run(socket, isServer: true, targetHost: null, endpoint, _options);
                }
                catch (Exception) when (deadline.IsCancellationRequested && !_stop.IsCancellationRequested)
                {
                    throw new TimeoutException($"{endpoint} did not complete its handshake within {_options.ConnectTimeout.TotalMilliseconds:0} ms (TcpOptions.ConnectTimeout).");
                }
            }
            if (deadline.IsCancellationRequested)
            {
                link.Dispose();
                throw new TimeoutException($"{endpoint} did not complete its handshake within {_options.ConnectTimeout.TotalMilliseconds:0} ms (TcpOptions.ConnectTimeout).");
            }
            channel = new TcpFrameChannel(link, endpoint, _options);
            if (!_ready.Writer.TryWrite(channel))
            {
                channel.Dispose(); // disposed meanwhile
                _pendingSlots.Release();
            }
        }
        catch (Exception ex)
        {
            socket.Dispose();
            _pendingSlots.Release();
            if (!_stop.IsCancellationRequested)
            {
                try
                {
                    HandshakeFailed?.Invoke(endpoint, ex);
                }
                catch (Exception)
                {
                    // A diagnostics handler failed; the listener goes on.
                }
            }
        }
    }

    private static EndPoint? SafeRemoteEndPoint(Socket socket)
    {
        try
        {
            return socket.RemoteEndPoint;
        }
        catch (SocketException)
        {
            return null;
        }
    }
}
