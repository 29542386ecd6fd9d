namespace XCall.Transport.Tcp;

/// <summary>Settings of TCP connections, for both the connecting and the listening side.</summary>
public sealed record TcpOptions
{
    /// <summary>The defaults.</summary>
    public static TcpOptions Default { get; } = new();

    /// <summary>
    /// How long establishing a connection may take: the TCP connect, TLS, the pre-shared-key exchange and the
    /// transport preamble together. On the listening side, a peer that has not finished its handshake by then
    /// is dropped, and sooner when it holds a handshake slot a newcomer needs (see <see cref="HandshakeGrace"/>).
    /// Default 5 s.
    /// </summary>
    public TimeSpan ConnectTimeout { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Listening side: how long a peer's handshake may run before a newcomer may take its slot. A listener
    /// runs at most 64 handshakes at once (counting connections that finished theirs and wait for
    /// <see cref="TcpChannelListener.AcceptAsync"/>). When all are taken, a newly accepted connection takes
    /// the slot of the peer that has sent nothing for the longest time, if that is over 100 ms (every client
    /// speaks first at once: a TLS ClientHello, the pre-shared-key challenge or the preamble); failing that,
    /// of the oldest handshake, if it has run for longer than this; otherwise it waits for a slot. So silent
    /// connections cannot keep other clients out, and neither can peers that stall halfway (a TLS
    /// ClientHello cut short) for longer than this. The peer that loses its slot is closed and reported through
    /// <see cref="TcpChannelListener.HandshakeFailed"/> with a <see cref="TimeoutException"/>. Raise it for
    /// clients whose handshake takes several long round trips; <see cref="Timeout.InfiniteTimeSpan"/> keeps
    /// a peer that has spoken in its slot until <see cref="ConnectTimeout"/>. Default 1 s.
    /// </summary>
    public TimeSpan HandshakeGrace { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// A ping frame is sent when nothing was sent for this long, so the peer sees the connection alive.
    /// Default 1 s; <see cref="Timeout.InfiniteTimeSpan"/> sends no pings (then the peer must not expect them).
    /// </summary>
    public TimeSpan HeartbeatInterval { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// When nothing at all was received for this long while the channel waited for input, the peer is
    /// taken for dead: the channel closes with <see cref="XCallDisconnectedException"/> and every pending
    /// call fails. Must be longer than the peer's <see cref="HeartbeatInterval"/>. Default 5 s;
    /// <see cref="Timeout.InfiniteTimeSpan"/> disables the check (a closed or reset connection is still seen at once).
    /// </summary>
    public TimeSpan HeartbeatTimeout { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Largest frame payload accepted or sent, in bytes. An incoming length beyond it closes the connection
    /// before anything is allocated; a length within it allocates nothing by itself either: the receive buffer
    /// grows as the payload arrives, to twice what arrived. An outgoing frame beyond it fails with
    /// <see cref="InvalidOperationException"/>. Default 64 MiB.
    /// </summary>
    public int MaxFrameSize { get; init; } = 64 * 1024 * 1024;

    /// <summary>Disables Nagle's algorithm (TCP_NODELAY), so small frames leave at once. Default true.</summary>
    public bool NoDelay { get; init; } = true;

    /// <summary>The socket's send buffer size (SO_SNDBUF); null keeps the system's default.</summary>
    public int? SendBufferSize { get; init; }

    /// <summary>The socket's receive buffer size (SO_RCVBUF); null keeps the system's default.</summary>
    public int? ReceiveBufferSize { get; init; }

    /// <summary>
    /// How long a synchronous caller spins for its reply (trying, with <see cref="CallerReadsReplies"/>, to
    /// take the socket's receive side) before it sleeps, and how long the thread reading a plain socket
    /// polls it for more bytes before it blocks in a receive. A loopback round trip takes microseconds, and
    /// waking a sleeping thread can cost several times as much, so a short spin cuts the latency of small
    /// calls at the price of that much CPU after each burst of frames.
    /// Default 50 µs; <see cref="TimeSpan.Zero"/> does not spin.
    /// </summary>
    public TimeSpan ReplySpinTime { get; init; } = TimeSpan.FromMicroseconds(50);

    /// <summary>
    /// Lets a synchronous caller waiting for its reply read the socket itself when no other thread is
    /// reading (leader / follower), instead of being woken by the receive thread: the lowest latency for
    /// back-to-back synchronous calls. The receive thread takes the socket back about 1 ms after the last
    /// such caller left, so a reply to an asynchronous call that arrives within that millisecond waits for
    /// it. Plain TCP only (ignored with TLS). Default true.
    /// </summary>
    public bool CallerReadsReplies { get; init; } = true;

    /// <summary>TLS and pre-shared-key authentication; null means plain TCP with no authentication.</summary>
    public TcpSecurity? Security { get; init; }

    internal void Validate()
    {
        if (ConnectTimeout <= TimeSpan.Zero && ConnectTimeout != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(ConnectTimeout), ConnectTimeout, "ConnectTimeout must be positive or infinite.");
        }
        if (HandshakeGrace < TimeSpan.Zero && HandshakeGrace != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(HandshakeGrace), HandshakeGrace, "HandshakeGrace must be zero or more, or infinite.");
        }
        if (HeartbeatInterval <= TimeSpan.Zero && HeartbeatInterval != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(HeartbeatInterval), HeartbeatInterval, "HeartbeatInterval must be positive or infinite.");
        }
        if (HeartbeatTimeout <= TimeSpan.Zero && HeartbeatTimeout != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(HeartbeatTimeout), HeartbeatTimeout, "HeartbeatTimeout must be positive or infinite.");
        }
        if (HeartbeatTimeout != Timeout.InfiniteTimeSpan && HeartbeatInterval != Timeout.InfiniteTimeSpan && HeartbeatTimeout <= HeartbeatInterval)
        {
            throw new ArgumentException($"HeartbeatTimeout ({HeartbeatTimeout}) must be longer than HeartbeatInterval ({HeartbeatInterval}).", nameof(HeartbeatTimeout));
        }
        if (MaxFrameSize <= 0 || MaxFrameSize > Array.MaxLength - FrameCodec.PrefixSize)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxFrameSize), MaxFrameSize, "MaxFrameSize must be positive and fit in one array.");
        }
        if (ReplySpinTime < TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(ReplySpinTime), ReplySpinTime, "ReplySpinTime must not be negative.");
        }
        Security?.Validate();
    }
}
