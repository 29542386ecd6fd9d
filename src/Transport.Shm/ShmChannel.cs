using System.Net.Sockets;
using XCall.Transport.Shm.Lending;
using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm;

/// <summary>
/// A <see cref="FrameChannel"/> over one shared-memory segment: frames go out through one ring and come in
/// through the other; the rendezvous socket stays open to tell when the peer is gone.
/// </summary>
/// <remarks>
/// Threads: senders serialize on <see cref="_sendLock"/> from BeginFrame to Commit/Abort. Incoming frames
/// are polled by whoever holds the receiver role (the receive thread, or a caller waiting for its reply,
/// see ShmChannel.Receive.cs). A monitor thread blocks on the socket: end of file means the peer died or
/// closed, and in portable mode it turns wake-up bytes into local wake-ups.
/// Closing: <see cref="RequestStop"/> records the first reason and wakes everyone; the receive thread
/// then takes the role for good, delivers what the peer published before it went away, calls
/// <see cref="IFrameHandler.OnClosed"/> once, and exits. Memory is unmapped only after the receive and
/// monitor threads ended, no caller holds the role, no sender holds the send lock and none still issues
/// a wake-up it claimed under it.
/// </remarks>
internal sealed partial class ShmChannel : FrameChannel
{
    private readonly ShmSegment _segment;
    private readonly Socket _socket;
    private readonly string _endpoint;
    private readonly ShmOptions _options;
    private readonly RingSignal _inSignal;
    private readonly RingSignal _outSignal;
    private readonly RingReader _reader;
    private readonly RingWriter _writer;
    private readonly ShmRing _outgoing;
    private readonly ShmRing _incoming;
    private readonly SendLock _sendLock = new();
    private readonly Lock _stateLock = new();
    private readonly Thread _monitorThread;
    private Thread? _receiveThread;
    private IFrameHandler? _handler;

    private int _stopping;
    private StopKind _stopKind;
    private Exception? _stopError;
    private int _closedNotified;
    private int _disposed;
    private int _releaseOnExit;
    private int _released;

    internal unsafe ShmChannel(ShmSegment segment, Socket socket, bool isServer, ShmOptions options, string endpoint, bool portableWake, LendTerms lending = default)
    {
        _segment = segment;
        _socket = socket;
        _endpoint = endpoint;
        _options = options;
        ShmRing incoming = isServer ? segment.ClientToServer : segment.ServerToClient;
        ShmRing outgoing = isServer ? segment.ServerToClient : segment.ClientToServer;
        Action<byte>? poke = portableWake ? SendPoke : null;
        _inSignal = new RingSignal(incoming, options.IdleStrategy, endpoint, portableWake, poke);
        _outSignal = new RingSignal(outgoing, options.IdleStrategy, endpoint, portableWake, poke);
        LoanBook? loans = lending.PeerReadsUs && lending.PeerPid > 0
            ? new LoanBook(segment, segment.LoanSlots(clientToServer: !isServer), lending.PeerPid, options.LendThreshold, endpoint)
            : null;
        _writer = new RingWriter(outgoing, _outSignal) { Endpoint = endpoint, Loans = loans };
        _reader = new RingReader(incoming, _inSignal, options.MaxFrameLength)
        {
            PeerMemory = lending.WeReadPeer && lending.PeerPid > 0
                ? new PeerReader(segment, segment.LoanSlots(clientToServer: isServer), lending.PeerPid, endpoint, options.MaxFrameLength)
                : null,
            Loans = loans,
        };
        _outgoing = outgoing;
        _incoming = incoming;
        _monitorThread = new Thread(MonitorLoop) { IsBackground = true, Name = $"xcall {endpoint} monitor" };
        _monitorThread.Start();
        StartHeartbeat();
    }

    private enum StopKind
    {
        None,
        Disposed,
        Goodbye,
        PeerGone,
        Fault,
    }

    /// <inheritdoc/>
    public override string RemoteEndpoint => _endpoint;

    /// <summary>True when wake-ups go through futexes (false: portable socket bytes).</summary>
    internal bool UsesFutex => _inSignal.UsesFutex;

    /// <inheritdoc/>
    public override FrameChannel? LoanLink => _writer.Loans is null ? null : this;

    /// <inheritdoc/>
    public override void TakeBackLoans(ulong callId) => _writer.Loans?.Revoke(callId);

    /// <summary>True when this side lends the peer its large arrays (the peer can read our memory).</summary>
    internal bool LendsToPeer => _writer.Loans is not null;

    /// <summary>True when the peer may lend us its large arrays (we can read its memory).</summary>
    internal bool ReadsPeerMemory => _reader.PeerMemory is not null;

    /// <summary>True while arrays this side lent wait for their call's reply.</summary>
    internal bool HoldsLoans => _writer.Loans?.HasSealed ?? false;

    /// <summary>Bytes of arrays this side lent the peer instead of copying them into the ring.</summary>
    internal long LentBytes => _writer.Loans?.LentBytes ?? 0;

    /// <summary>Tests: the ring this side writes into, its signal, and the end of what was published.</summary>
    internal (ShmRing Ring, RingSignal Signal, long Tail) Outgoing => (_outgoing, _outSignal, _writer.Tail);

    /// <inheritdoc/>
    public override void Start(IFrameHandler handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        lock (_stateLock)
        {
            if (_receiveThread is not null)
            {
                throw new InvalidOperationException("The channel was already started.");
            }
            ObjectDisposedException.ThrowIf(_disposed != 0, this);
            var thread = new Thread(ReceiveLoop) { IsBackground = true, Name = $"xcall {_endpoint} receive" };
            _receiveThreadId = thread.ManagedThreadId;
            _receiveThread = thread;
            Volatile.Write(ref _handler, handler);
            thread.Start();
        }
    }

    /// <inheritdoc/>
    public override void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        // Stop first: the peer answers our goodbye by closing its end, and that must not pass for our peer
        // dying. Then the goodbye (the peer tells an orderly close from a crash), then the socket.
        RequestStop(StopKind.Disposed, null);
        SayGoodbye();
        ShutdownSocket();

        Thread? receiveThread;
        lock (_stateLock)
        {
            receiveThread = _receiveThread;
        }
        if (receiveThread == Thread.CurrentThread || Volatile.Read(ref _roleOwner) == Environment.CurrentManagedThreadId)
        {
            // Called from a handler: this thread is still inside the ring. The receive thread finishes the
            // close once the role is free, and releases the memory then.
            Volatile.Write(ref _releaseOnExit, 1);
            return;
        }
        if (receiveThread is not null)
        {
            receiveThread.Join();
        }
        else
        {
            TakeRoleForGood();
        }
        ReleaseResources();
    }

    private void ShutdownSocket()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // Already closed by the peer.
        }
    }

    private void SayGoodbye()
    {
        if (_sendLock.TryEnter(100) != SendLock.Outcome.Entered)
        {
            return;
        }
        try
        {
            bool disposedFirst;
            lock (_stateLock)
            {
                disposedFirst = _stopKind == StopKind.Disposed; // not after the peer went away or the ring broke
            }
            if (disposedFirst && !_writer.IsFrameOpen && _writer.TryWriteControl(RecordType.Goodbye))
            {
                _outSignal.WakeConsumerIfSleeping();
            }
        }
        finally
        {
            _sendLock.Exit();
        }
    }

    /// <summary>Records why the channel stops (the first reason wins) and wakes every thread that waits on it.</summary>
    private void RequestStop(StopKind kind, Exception? error)
    {
        lock (_stateLock)
        {
            if (_stopKind != StopKind.None)
            {
                if (kind == StopKind.Goodbye && _stopKind == StopKind.PeerGone)
                {
                    _stopKind = kind; // the end of file raced ahead of the goodbye read from the ring
                }
                return;
            }
            _stopKind = kind;
            _stopError = error;
        }
        string reason = StopText(kind, error);
        _inSignal.Stop(reason);
        _outSignal.Stop(reason);
        Volatile.Write(ref _stopping, 1);
        _inSignal.WakeConsumer(remote: false);
        _inSignal.WakeLeader(remote: false);
        _outSignal.WakeProducer(remote: false);
    }

    private static string StopText(StopKind kind, Exception? error) => kind switch
    {
        StopKind.PeerGone => "the peer process exited or closed the connection",
        StopKind.Goodbye => "the peer closed the connection",
        StopKind.Fault => error?.Message ?? "the connection failed",
        _ => "the connection was closed",
    };

    private Exception? CloseReason()
    {
        lock (_stateLock)
        {
            return _stopKind switch
            {
                StopKind.PeerGone => new XCallDisconnectedException(_endpoint, "the peer process exited or closed the connection without saying goodbye"),
                StopKind.Fault => _stopError,
                _ => null,
            };
        }
    }

    private void NotifyClosed(IFrameHandler handler)
    {
        if (Interlocked.Exchange(ref _closedNotified, 1) != 0)
        {
            return;
        }
        try
        {
            handler.OnClosed(CloseReason());
        }
        catch (Exception)
        {
            // The handler's own failure while closing; the channel is closed either way.
        }
    }

    private void ReleaseResources()
    {
        if (Interlocked.Exchange(ref _released, 1) != 0)
        {
            return;
        }
        StopHeartbeat();
        if (Thread.CurrentThread != _monitorThread)
        {
            _monitorThread.Join();
        }
        // A sender stuck between BeginFrame and CommitFrame would still write into the ring: then leave the
        // mapping to the finalizer rather than pull the memory from under it.
        // So would a sender still issuing a wake-up it claimed under the lock (CommitFrame): it touches the ring's words.
        if (_sendLock.TryEnter(5000) == SendLock.Outcome.Entered)
        {
            try
            {
                if (SpinWait.SpinUntil(() => Volatile.Read(ref _wakesOutsideLock) == 0, TimeSpan.FromSeconds(5)))
                {
                    _writer.Loans?.RevokeAll(); // before the words it uses go, and before the arrays are unpinned
                    _segment.Dispose();
                }
            }
            finally
            {
                _sendLock.Exit();
            }
        }
        _socket.Dispose();
    }

    private void MonitorLoop()
    {
        byte[] buffer = new byte[64];
        try
        {
            while (true)
            {
                int n = _socket.Receive(buffer);
                if (n <= 0)
                {
                    break;
                }
                for (int i = 0; i < n; i++)
                {
                    if (buffer[i] is RingSignal.PokeData or RingSignal.PokeLeader)
                    {
                        _inSignal.OnPoke(buffer[i]);
                    }
                    else
                    {
                        _outSignal.OnPoke(buffer[i]);
                    }
                }
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // Reset by the peer or closed by Dispose: either way the connection is over.
        }
        RequestStop(StopKind.PeerGone, null);
    }

    private unsafe void SendPoke(byte poke)
    {
        try
        {
            _socket.Send(new ReadOnlySpan<byte>(&poke, 1));
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // The peer is gone; the monitor thread reports it.
        }
    }
}
