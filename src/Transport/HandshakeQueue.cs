using System.Net.Sockets;
using System.Threading.Channels;

namespace XCall.Transport;

/// <summary>
/// The accepting half of a listener: takes connections off a listening socket on a thread of its own, runs
/// each one's handshake on a short-lived thread (blocking calls: on pool threads several slow peers would
/// starve the pool), each bounded by <see cref="HandshakePolicy.Deadline"/>, and hands out the channels in
/// the order their handshakes completed. One slow or silent peer therefore delays no other; and when all
/// <see cref="MaxPending"/> slots are taken, a newcomer takes the slot of a peer that has sent nothing for
/// <see cref="SilentGraceMs"/>, else of the oldest handshake past <see cref="HandshakePolicy.Grace"/>,
/// rather than wait behind them.
/// </summary>
/// <remarks>
/// The queue waits for the peer's first byte (every client speaks first) and then calls the handshake with
/// a token that fires at the deadline or when the queue is disposed; the handshake must make every wait end
/// then (closing its socket does), and return null (or throw) for a peer it turns away, having closed that
/// socket and released what it made for it. A newcomer replaces a peer by closing its socket, which ends
/// its handshake the same way. A failure other than a refusal (null) is reported through
/// <see cref="HandshakeFailed"/>.
/// </remarks>
// Design: a slot is held from accept until AcceptAsync takes the channel (or the handshake fails). Only the
// accept thread takes slots, under _slotsGate: a free one, or the slot of a running handshake it replaces,
// which it removes from _handshakes before closing that peer's socket outside the lock. A handshake thread
// gives its slot back only if it still finds itself in _handshakes when it ends; one that is gone was
// replaced, its slot already passed on. So a slot changes hands exactly once whichever side gets there first.
public sealed class HandshakeQueue<TChannel> : IDisposable
    where TChannel : FrameChannel
{
    /// <summary>Connections accepted but not yet taken by <see cref="AcceptAsync"/>, handshakes included.</summary>
    public const int MaxPending = 64;

    /// <summary>How long a peer may stay silent from its accept before a newcomer may take its slot: every
    /// client speaks first at once; this only covers a client that is slow to be scheduled.</summary>
    public const int SilentGraceMs = 100;

    private static readonly TimeSpan s_disposeWait = TimeSpan.FromSeconds(5);

    /// <summary>The pause after an accept that failed for want of resources.</summary>
    private const int AcceptRetryMs = 20;

    /// <summary>The queue whose handshake this thread runs, if any.</summary>
    [ThreadStatic]
    private static HandshakeQueue<TChannel>? t_establishing;

    private readonly Socket _listening;
    private readonly Func<Socket, CancellationToken, TChannel?> _handshake;
    private readonly HandshakePolicy _policy;
    private readonly long _graceMs;
    private readonly Channel<TChannel> _ready = Channel.CreateUnbounded<TChannel>(new UnboundedChannelOptions { SingleWriter = false });
    private readonly object _slotsGate = new();
    private readonly List<PendingHandshake> _handshakes = []; // running, oldest first
    private readonly CancellationTokenSource _stop = new();

    /// <summary>One count while the queue is open, one per handshake running.</summary>
    private readonly CountdownEvent _running = new(1);
    private readonly Thread _acceptThread;
    private int _slotsTaken;
    private bool _newcomerWaits;
    private int _disposed;

    /// <summary>Starts accepting on <paramref name="listening"/> (bound and listening), which the queue now owns.</summary>
    public HandshakeQueue(Socket listening, Func<Socket, CancellationToken, TChannel?> handshake, HandshakePolicy policy)
    {
        _listening = listening;
        _handshake = handshake;
        _policy = policy;
        _graceMs = policy.Grace == Timeout.InfiniteTimeSpan ? -1 : (long)policy.Grace.TotalMilliseconds;
        _acceptThread = new Thread(static s => ((HandshakeQueue<TChannel>)s!).AcceptLoop()) { IsBackground = true, Name = policy.ThreadName + " accept" };
        _acceptThread.UnsafeStart(this);
    }

    /// <summary>
    /// Raised, on the thread that ran its handshake, when a peer fails its handshake (a fault, its deadline,
    /// or its slot given to a newcomer: then with a <see cref="TimeoutException"/>): the peer's name and why.
    /// Peers the handshake turned away (null) are not reported. Exceptions thrown by handlers are ignored.
    /// </summary>
    public event Action<string, Exception>? HandshakeFailed;

    /// <summary>Slots taken: handshakes running and channels not yet accepted (tests).</summary>
    public int SlotsTaken => Volatile.Read(ref _slotsTaken);

    /// <summary>True while an accepted connection waits for a slot that nobody may give up yet (tests).</summary>
    public bool NewcomerWaits => Volatile.Read(ref _newcomerWaits);

    /// <summary>Waits for the next channel whose handshake completed.</summary>
    /// <exception cref="ObjectDisposedException">The queue was disposed.</exception>
    public async ValueTask<TChannel> AcceptAsync(CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        TChannel channel;
        try
        {
            channel = await _ready.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            throw new ObjectDisposedException(GetType().Name);
        }
        ReleaseSlot();
        return channel;
    }

    /// <summary>
    /// Stops accepting (closing the listening socket) and ends the handshakes under way before it returns
    /// (bounded by a few seconds, should one not end); closes the channels not taken yet.
    /// </summary>
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
        _listening.Dispose();
        _ready.Writer.TryComplete();
        // No caller code runs on the accept thread, so it is not the one calling this; a HandshakeFailed
        // handler runs on a handshake thread and may be: then the handshakes cannot all end before this returns.
        bool ended = _acceptThread.Join(s_disposeWait);
        _running.Signal();
        ended = ended && !ReferenceEquals(t_establishing, this) && _running.Wait(s_disposeWait);
        while (_ready.Reader.TryRead(out TChannel? channel))
        {
            channel.Dispose();
        }
        if (ended)
        {
            _running.Dispose();
            _stop.Dispose();
        }
    }

    private void AcceptLoop()
    {
        CancellationToken stop = _stop.Token;
        while (true)
        {
            Socket socket;
            try
            {
                socket = _listening.Accept();
            }
            catch (Exception ex) when (ex is ObjectDisposedException || stop.IsCancellationRequested)
            {
                return;
            }
            catch (SocketException ex)
            {
                // The peer reset before we took it: keep listening. A shortage (file descriptors, memory) would
                // fail every accept at once: pause a little rather than spin a core until it passes.
                if (ex.SocketErrorCode is not (SocketError.ConnectionReset or SocketError.ConnectionAborted))
                {
                    stop.WaitHandle.WaitOne(AcceptRetryMs);
                }
                continue;
            }
            var handshake = new PendingHandshake(socket, Describe(socket));
            if (!TakeSlot(handshake) || !_running.TryAddCount())
            {
                socket.Dispose();
                return;
            }
            try
            {
                new Thread(() => Establish(handshake)) { IsBackground = true, Name = _policy.ThreadName + " handshake" }.UnsafeStart();
            }
            catch (OutOfMemoryException)
            {
                // No thread for this peer: turn it away and keep serving the others (the slot and count go back).
                socket.Dispose();
                if (EndHandshake(handshake))
                {
                    ReleaseSlot();
                }
                _running.Signal();
            }
        }
    }

    /// <summary>
    /// Gives <paramref name="newcomer"/> a slot: a free one, else the slot of the peer silent the longest past
    /// <see cref="SilentGraceMs"/>, else of the oldest handshake past the grace; else waits until one of these
    /// comes. False when the queue is disposed meanwhile.
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
        replaced?.Socket.Dispose(); // ends its handshake, which then reports ReplacedError
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
        if (_graceMs >= 0 && _handshakes.Count > 0)
        {
            PendingHandshake oldest = _handshakes[0];
            long age = now - oldest.AcceptedAt;
            if (age >= _graceMs)
            {
                oldest.ReplacedBecause = $"its handshake had run for {age} ms ({_policy.GraceOption} is {_graceMs} ms)";
                return oldest;
            }
            soonest = Math.Min(soonest, _graceMs - age);
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
        t_establishing = this;
        try
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(_stop.Token);
            if (_policy.Deadline != Timeout.InfiniteTimeSpan)
            {
                deadline.CancelAfter(_policy.Deadline);
            }
            TChannel? channel = null;
            Exception? error = null;
            try
            {
                channel = Run(handshake, deadline.Token);
            }
            catch (Exception ex)
            {
                error = ex;
            }
            if (!EndHandshake(handshake))
            {
                channel?.Dispose(); // replaced just as it finished
                handshake.Socket.Dispose();
                Report(handshake.ReplacedError());
                return;
            }
            if (channel is null)
            {
                handshake.Socket.Dispose();
                ReleaseSlot();
                if (error is not null || (deadline.IsCancellationRequested && !_stop.IsCancellationRequested))
                {
                    Report(deadline.IsCancellationRequested && !_stop.IsCancellationRequested ? TimedOut(handshake) : error!);
                }
                return;
            }
            if (!_ready.Writer.TryWrite(channel))
            {
                channel.Dispose(); // disposed meanwhile
                ReleaseSlot();
            }
        }
        finally
        {
            _running.Signal();
        }

        void Report(Exception error)
        {
            if (_stop.IsCancellationRequested)
            {
                return;
            }
            try
            {
                HandshakeFailed?.Invoke(handshake.Peer, error);
            }
            catch (Exception)
            {
                // A diagnostics handler failed; the listener goes on.
            }
        }
    }

    /// <summary>Waits for the peer's first byte, then runs the handshake.</summary>
    private TChannel? Run(PendingHandshake handshake, CancellationToken deadline)
    {
        Socket socket = handshake.Socket;
        using (deadline.UnsafeRegister(static s => ((Socket)s!).Dispose(), socket))
        {
            // Until its first byte the peer counts as silent (see TakeSlot). Closing the socket ends the wait:
            // the deadline, a newcomer replacing this peer, the queue disposed.
            socket.Poll(-1, SelectMode.SelectRead);
        }
        handshake.MarkSpoken();
        deadline.ThrowIfCancellationRequested();
        return _handshake(socket, deadline);
    }

    private TimeoutException TimedOut(PendingHandshake handshake) =>
        new($"{handshake.Peer} did not complete its handshake within {_policy.Deadline.TotalMilliseconds:0} ms ({_policy.DeadlineOption}).");

    private string Describe(Socket socket)
    {
        try
        {
            return _policy.Describe(socket);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            return _policy.ThreadName; // gone already; named by the listener
        }
    }

    /// <summary>A peer accepted and still in its handshake.</summary>
    private sealed class PendingHandshake(Socket socket, string peer)
    {
        private volatile bool _spoke;

        public Socket Socket { get; } = socket;

        public string Peer { get; } = peer;

        public long AcceptedAt { get; } = Environment.TickCount64;

        /// <summary>Why a newcomer took this peer's slot (set under the queue's slot lock).</summary>
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

        public TimeoutException ReplacedError() =>
            new($"{Peer} did not complete its handshake before a newer connection needed its slot: all {MaxPending} were taken and {ReplacedBecause}.");
    }
}
