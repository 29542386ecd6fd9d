using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;

namespace XCall.Transport.Tcp;

/// <summary>
/// A listening TCP socket that hands out authenticated <see cref="FrameChannel"/>s. Handshakes (TLS,
/// pre-shared key, preamble) run in the background, several at once, each bounded by
/// <see cref="TcpOptions.ConnectTimeout"/>; a peer that fails one is closed, reported through
/// <see cref="HandshakeFailed"/> and never returned, and the listener keeps accepting. When all slots for
/// handshakes are taken, a newcomer takes the slot of a peer that has sent nothing, or of one whose handshake
/// has run longer than <see cref="TcpOptions.HandshakeGrace"/>, rather than wait behind it.
/// </summary>
// Design: a slot is held from accept until AcceptAsync takes the channel (or the handshake fails). Only the
// accept thread takes slots, under _slotsGate: a free one, or the slot of a running handshake it replaces,
// which it removes from _handshakes before closing that peer's socket outside the lock. A handshake thread
// gives its slot back only if it still finds itself in _handshakes when it ends; one that is gone was
// replaced, its slot already passed on. So a slot changes hands exactly once whichever side gets there first.
public sealed class TcpListenerChannel : IDisposable
{
    /// <summary>Connections accepted but not yet taken by <see cref="AcceptAsync"/>, handshakes included.</summary>
    private const int MaxPending = 64;

    /// <summary>How long a peer may stay silent from its accept before a newcomer may take its slot: every client
    /// speaks first at once (TLS ClientHello, pre-shared-key challenge, preamble); this only covers a client
    /// that is slow to be scheduled.</summary>
    private const int SilentGraceMs = 100;

    private readonly Socket _socket;
    private readonly TcpOptions _options;
    private readonly long _handshakeGraceMs;
    private readonly Channel<TcpFrameChannel> _ready = Channel.CreateUnbounded<TcpFrameChannel>(new UnboundedChannelOptions { SingleWriter = false });
    private readonly object _slotsGate = new();
    private readonly List<PendingHandshake> _handshakes = []; // running, oldest first
    private readonly CancellationTokenSource _stop = new();
    private readonly Thread _acceptThread;
    private int _slotsTaken;
    private bool _newcomerWaits;
    private int _disposed;

    internal TcpListenerChannel(IPEndPoint endpoint, TcpOptions options)
    {
        _options = options;
        _handshakeGraceMs = options.HandshakeGrace == Timeout.InfiniteTimeSpan ? -1 : (long)options.HandshakeGrace.TotalMilliseconds;
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

    /// <summary>Slots taken: handshakes running and channels not yet accepted (tests).</summary>
    internal int PendingHandshakes => Volatile.Read(ref _slotsTaken);

    /// <summary>True while an accepted connection waits for a slot that nobody may give up yet (tests).</summary>
    internal bool NewcomerWaits => Volatile.Read(ref _newcomerWaits);

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
        ReleaseSlot();
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
        lock (_slotsGate)
        {
            Monitor.PulseAll(_slotsGate); // an accept thread waiting for a slot gives up
        }
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
                socket = _socket.Accept();
            }
            catch (Exception ex) when (ex is ObjectDisposedException || stop.IsCancellationRequested)
            {
                return;
            }
            catch (SocketException)
            {
                // The peer reset before we took it, or a transient shortage (file descriptors): keep listening.
                continue;
            }
            var handshake = new PendingHandshake(socket);
            if (!TakeSlot(handshake))
            {
                socket.Dispose();
                return;
            }
            // Blocking handshake on a thread of its own (see DedicatedThread); at most MaxPending at once, and
            // the replaced ones on their way out.
            DedicatedThread.Run(() => Establish(handshake), "XCall tcp handshake");
        }
    }

    /// <summary>
    /// Gives <paramref name="newcomer"/> a slot: a free one, else the slot of the peer silent the longest past
    /// <see cref="SilentGraceMs"/>, else of the oldest handshake past <see cref="TcpOptions.HandshakeGrace"/>;
    /// else waits until one of these comes. False when the listener is disposed meanwhile.
    /// </summary>
    private bool TakeSlot(PendingHandshake newcomer)
    {
        PendingHandshake? replaced = null;
        lock (_slotsGate)
        {
            while (true)
            {
                if (_stop.IsCancellationRequested)
                {
                    return false;
                }
                if (_slotsTaken < MaxPending)
                {
                    _slotsTaken++;
                    break;
                }
                replaced = FindReplaceableUnsynchronized(out int retryMs);
                if (replaced is not null)
                {
                    _handshakes.Remove(replaced);
                    break;
                }
                Volatile.Write(ref _newcomerWaits, true);
                Monitor.Wait(_slotsGate, retryMs);
                Volatile.Write(ref _newcomerWaits, false);
            }
            _handshakes.Add(newcomer);
        }
        replaced?.Replace();
        return true;
    }

    /// <summary>The handshake a newcomer may replace now, or null and how long until one may become so (or a slot frees).</summary>
    private PendingHandshake? FindReplaceableUnsynchronized(out int retryMs)
    {
        retryMs = 0;
        long now = Environment.TickCount64;
        long soonest = long.MaxValue;
        foreach (PendingHandshake handshake in _handshakes)
        {
            if (!handshake.HasSpoken())
            {
                long age = now - handshake.AcceptedAt;
                if (age >= SilentGraceMs)
                {
                    handshake.ReplacedBecause = $"it had sent nothing for {age} ms";
                    return handshake;
                }
                soonest = Math.Min(soonest, SilentGraceMs - age);
            }
        }
        if (_handshakeGraceMs >= 0 && _handshakes.Count > 0)
        {
            PendingHandshake oldest = _handshakes[0];
            long age = now - oldest.AcceptedAt;
            if (age >= _handshakeGraceMs)
            {
                oldest.ReplacedBecause = $"its handshake had run for {age} ms (TcpOptions.HandshakeGrace is {_handshakeGraceMs} ms)";
                return oldest;
            }
            soonest = Math.Min(soonest, _handshakeGraceMs - age);
        }
        retryMs = soonest == long.MaxValue ? Timeout.Infinite : (int)Math.Min(soonest + 1, int.MaxValue);
        return null;
    }

    /// <summary>Ends a handshake's hold on the slot list; false when it was replaced (its slot is no longer its own).</summary>
    private bool EndHandshake(PendingHandshake handshake)
    {
        lock (_slotsGate)
        {
            return _handshakes.Remove(handshake);
        }
    }

    private void ReleaseSlot()
    {
        lock (_slotsGate)
        {
            _slotsTaken--;
            Monitor.Pulse(_slotsGate);
        }
    }

    private void Establish(PendingHandshake handshake)
    {
        string endpoint = TcpTransport.FormatEndpoint(SafeRemoteEndPoint(handshake.Socket));
        TcpLink link;
        try
        {
            link = RunHandshake(handshake, endpoint);
        }
        catch (Exception ex)
        {
            handshake.Socket.Dispose();
            bool slotHeld = EndHandshake(handshake);
            Fail(endpoint, slotHeld ? ex : handshake.ReplacedError(endpoint), slotHeld);
            return;
        }
        if (!EndHandshake(handshake))
        {
            link.Dispose(); // replaced just as it finished
            Fail(endpoint, handshake.ReplacedError(endpoint), slotHeld: false);
            return;
        }
        try
        {
            var channel = new TcpFrameChannel(link, endpoint, _options);
            if (!_ready.Writer.TryWrite(channel))
            {
                channel.Dispose(); // disposed meanwhile
                ReleaseSlot();
            }
        }
        catch (Exception ex)
        {
            link.Dispose();
            Fail(endpoint, ex, slotHeld: true);
        }
    }

    /// <summary>Runs the server side of the handshake within <see cref="TcpOptions.ConnectTimeout"/>.</summary>
    private TcpLink RunHandshake(PendingHandshake handshake, string endpoint)
    {
        Socket socket = handshake.Socket;
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
                // Until its first byte the peer counts as silent (see TakeSlot). Closing the socket ends the
                // wait too: the deadline, a newcomer replacing this peer, the listener disposed.
                socket.Poll(-1, SelectMode.SelectRead);
                handshake.MarkSpoken();
                link = TcpHandshake.Run(socket, isServer: true, targetHost: null, endpoint, _options);
            }
            catch (Exception) when (deadline.IsCancellationRequested && !_stop.IsCancellationRequested)
            {
                throw HandshakeTimedOut(endpoint);
            }
        }
        // Disposing the registration waited for a callback in flight: past here the deadline cannot close the socket.
        if (deadline.IsCancellationRequested)
        {
            link.Dispose();
            throw HandshakeTimedOut(endpoint);
        }
        return link;
    }

    /// <summary>Gives back the slot of a handshake that failed, unless it was passed on, and reports the failure.</summary>
    private void Fail(string endpoint, Exception error, bool slotHeld)
    {
        if (slotHeld)
        {
            ReleaseSlot();
        }
        if (_stop.IsCancellationRequested)
        {
            return;
        }
        try
        {
            HandshakeFailed?.Invoke(endpoint, error);
        }
        catch (Exception)
        {
            // A diagnostics handler failed; the listener goes on.
        }
    }

    private TimeoutException HandshakeTimedOut(string endpoint) =>
        new($"{endpoint} did not complete its handshake within {_options.ConnectTimeout.TotalMilliseconds:0} ms (TcpOptions.ConnectTimeout).");

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

    /// <summary>A peer accepted and still in its handshake.</summary>
    private sealed class PendingHandshake(Socket socket)
    {
        private volatile bool _spoke;

        public Socket Socket { get; } = socket;

        public long AcceptedAt { get; } = Environment.TickCount64;

        /// <summary>Why a newcomer took this peer's slot (set under the listener's slot lock).</summary>
        public string? ReplacedBecause { get; set; }

        /// <summary>Called by the handshake thread once the first byte is there, before it reads it.</summary>
        public void MarkSpoken() => _spoke = true;

        /// <summary>True when the peer sent something: seen by its handshake thread, or waiting in the socket
        /// for a handshake thread that has not looked yet.</summary>
        public bool HasSpoken()
        {
            if (_spoke)
            {
                return true;
            }
            try
            {
                return Socket.Available > 0;
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
            {
                return false; // closed already: nothing to keep
            }
        }

        /// <summary>Closes the peer's socket, which ends its handshake thread (with <see cref="ReplacedError"/>).</summary>
        public void Replace() => Socket.Dispose();

        public TimeoutException ReplacedError(string endpoint) =>
            new($"{endpoint} did not complete its handshake before a newer connection needed its slot: all {MaxPending} were taken and {ReplacedBecause}.");
    }
}
