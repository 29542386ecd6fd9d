namespace XCall.Transport.Shm;

/// <summary>Settings of the shared-memory transport, for listeners and clients.</summary>
public sealed record ShmOptions
{
    /// <summary>Smallest allowed <see cref="RingSize"/>: 4 KiB.</summary>
    public const int MinRingSize = 4096;

    /// <summary>Largest allowed <see cref="RingSize"/>: 1 GiB.</summary>
    public const int MaxRingSize = 1 << 30;

    /// <summary>The defaults.</summary>
    public static ShmOptions Default { get; } = new();

    /// <summary>
    /// Bytes of ring per direction, a power of two between <see cref="MinRingSize"/> and
    /// <see cref="MaxRingSize"/>. Default 1 MiB. A connection uses the larger of the two sides' values.
    /// Frames larger than the ring still pass: they stream through it in chunks.
    /// </summary>
    public int RingSize { get; init; } = 1 << 20;

    /// <summary>
    /// Whether large arrays cross by cross-memory attach (Linux <c>process_vm_readv</c>): in a synchronous call,
    /// an argument array of unmanaged values of at least <see cref="LendThreshold"/> bytes is not copied into the
    /// ring; the peer copies it straight out of the caller's memory into its own new array, one copy instead of two.
    /// The caller's array stays pinned until the call's reply arrives (even after a timeout), or the connection
    /// ends. Used only where the handshake proved that each side can read the other (same user, no ptrace
    /// restriction such as Yama in the way); otherwise, and in async and one-way calls and in replies, arrays
    /// go through the ring. Either side turning it off turns it off for the connection. Default true.
    /// </summary>
    public bool CrossMemoryAttach { get; init; } = true;

    /// <summary>Smallest allowed <see cref="LendThreshold"/>: 4 KiB (below it a system call costs more than the copy it saves).</summary>
    public const int MinLendThreshold = 4096;

    /// <summary>
    /// When the peer's heartbeat (a counter its process moves in the shared segment a few times a second, from
    /// a thread of its own) stays still this long, the peer is taken for dead although its socket is open: a
    /// stopped (SIGSTOP) or frozen process. The connection closes with <see cref="XCallDisconnectedException"/>
    /// and every pending call fails. A peer that runs but is busy (a long call, a full ring) keeps beating.
    /// Time this process itself did not run does not count. At least 1 s; default 5 s;
    /// <see cref="Timeout.InfiniteTimeSpan"/> turns the check off (this side still beats for its peer).
    /// </summary>
    public TimeSpan HeartbeatTimeout { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>The smallest array, in bytes, lent by <see cref="CrossMemoryAttach"/>, at least <see cref="MinLendThreshold"/>. Default 32 KiB.</summary>
    public int LendThreshold { get; init; } = 32 << 10;

    /// <summary>How waiting threads spend their time. Default <see cref="ShmIdleStrategy.Adaptive"/>.</summary>
    public ShmIdleStrategy IdleStrategy { get; init; } = ShmIdleStrategy.Adaptive;

    /// <summary>
    /// User ids allowed to connect besides this process's own (checked with SO_PEERCRED on the rendezvous
    /// socket, by both sides). Null or empty: only our own uid. A peer of another uid must also be able to
    /// reach <see cref="RuntimeDirectory"/>, which is private to its owner (mode 0700).
    /// </summary>
    public IReadOnlyCollection<uint>? AllowedUids { get; init; }

    /// <summary>
    /// Where rendezvous sockets live: <c>$XDG_RUNTIME_DIR/xcall</c>, or <c>/tmp/xcall-&lt;uid&gt;</c> when
    /// XDG_RUNTIME_DIR is not set. Created with mode 0700; an existing directory must belong to this user
    /// (or to an allowed uid) and is made 0700.
    /// </summary>
    public string RuntimeDirectory { get; init; } = DefaultRuntimeDirectory();

    /// <summary>
    /// How long connecting (socket connect, peer check, segment handshake) may take; on a listener, how long
    /// one client's handshake may take before the listener drops that client. Default 5 s.
    /// </summary>
    public TimeSpan ConnectTimeout { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Listening side: how long a client's handshake may run before a newcomer may take its slot. A listener
    /// runs at most 64 handshakes at once (counting connections that finished theirs and wait for
    /// <see cref="ShmListener.AcceptAsync"/>). When all are taken, a newly accepted connection takes the slot
    /// of the client that has sent nothing for the longest time, if that is over 100 ms (a client sends its
    /// hello at once); failing that, of the oldest handshake, if it has run for longer than this; otherwise it
    /// waits for a slot. The client that loses its slot is closed (its segment released) and reported through
    /// <see cref="ShmListener.HandshakeFailed"/>. <see cref="Timeout.InfiniteTimeSpan"/> keeps a client that
    /// has spoken in its slot until <see cref="ConnectTimeout"/>. Default 1 s.
    /// </summary>
    public TimeSpan HandshakeGrace { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Largest frame accepted from the peer. Frames that fit in the ring are read in place; larger ones are
    /// gathered on the receiving side, so this bounds what a peer can make us buffer. Default
    /// <see cref="Array.MaxLength"/>.
    /// </summary>
    public long MaxFrameLength { get; init; } = Array.MaxLength;

    /// <summary>Tests: wake through the rendezvous socket even where futexes work.</summary>
    internal bool ForcePortableWake { get; init; }

    /// <summary>Tests: called by the listener with the descriptor of each segment right after creating it.</summary>
    internal Action<Microsoft.Win32.SafeHandles.SafeFileHandle>? SegmentCreated { get; init; }

    internal static string DefaultRuntimeDirectory()
    {
        string? xdg = Environment.GetEnvironmentVariable("XDG_RUNTIME_DIR");
        return !string.IsNullOrEmpty(xdg) && Path.IsPathRooted(xdg)
            ? Path.Combine(xdg, "xcall")
            : Path.Combine(Path.GetTempPath(), $"xcall-{Interop.Libc.EffectiveUid}");
    }

    internal void Validate()
    {
        if (RingSize < MinRingSize || RingSize > MaxRingSize || (RingSize & (RingSize - 1)) != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(RingSize), RingSize, $"RingSize must be a power of two between {MinRingSize} and {MaxRingSize}.");
        }
        if (!Enum.IsDefined(IdleStrategy))
        {
            throw new ArgumentOutOfRangeException(nameof(IdleStrategy), IdleStrategy, "Unknown idle strategy.");
        }
        if ((ConnectTimeout <= TimeSpan.Zero || ConnectTimeout.TotalMilliseconds > int.MaxValue) && ConnectTimeout != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(ConnectTimeout), ConnectTimeout, "ConnectTimeout must be positive and at most int.MaxValue milliseconds (about 24 days), or infinite.");
        }
        if (HandshakeGrace < TimeSpan.Zero && HandshakeGrace != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(HandshakeGrace), HandshakeGrace, "HandshakeGrace must be zero or more, or infinite.");
        }
        if (LendThreshold < MinLendThreshold)
        {
            throw new ArgumentOutOfRangeException(nameof(LendThreshold), LendThreshold, $"LendThreshold must be at least {MinLendThreshold} bytes (turn lending off with CrossMemoryAttach = false).");
        }
        if ((HeartbeatTimeout < TimeSpan.FromSeconds(1) || HeartbeatTimeout.TotalMilliseconds > int.MaxValue) && HeartbeatTimeout != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(HeartbeatTimeout), HeartbeatTimeout, "HeartbeatTimeout must be at least 1 s and at most int.MaxValue milliseconds, or infinite.");
        }
        if (MaxFrameLength <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxFrameLength), MaxFrameLength, "MaxFrameLength must be positive.");
        }
        if (string.IsNullOrEmpty(RuntimeDirectory) || !Path.IsPathRooted(RuntimeDirectory))
        {
            throw new ArgumentException("RuntimeDirectory must be an absolute path.", nameof(RuntimeDirectory));
        }
    }

    internal bool IsAllowed(uint uid) => uid == Interop.Libc.EffectiveUid || (AllowedUids?.Contains(uid) ?? false);

    internal int ConnectTimeoutMilliseconds =>
        ConnectTimeout == Timeout.InfiniteTimeSpan ? Timeout.Infinite : (int)Math.Min(int.MaxValue, Math.Ceiling(ConnectTimeout.TotalMilliseconds));
}
