using System.Net.Sockets;
using System.Threading.Channels;

namespace XCall.Transport;

/// <summary>
/// The accepting half of a listener: takes connections off a listening socket on a thread of its own, runs
/// each one's handshake on a short-lived thread (at most <see cref="MaxPending"/> at once, counting channels
/// not yet taken), each bounded by a deadline, and hands out the channels in the order their handshakes
/// completed. One slow or silent peer therefore delays no other.
/// </summary>
/// <remarks>
/// The handshake gets a token that fires at its deadline or when the queue is disposed; it must make every
/// wait end then (closing its socket does), and return null (or throw) for a peer it turns away, having
/// closed that socket and released what it made for it. Handshakes use blocking calls: on pool threads
/// several slow peers would starve the pool.
/// </remarks>
internal sealed class HandshakeQueue<TChannel> : IDisposable
    where TChannel : FrameChannel
{
    /// <summary>Connections accepted but not yet taken by <see cref="AcceptAsync"/>, handshakes included.</summary>
    public const int MaxPending = 64;

    private static readonly TimeSpan s_disposeWait = TimeSpan.FromSeconds(5);

    private readonly Socket _listening;
    private readonly Func<Socket, CancellationToken, TChannel?> _handshake;
    private readonly TimeSpan _deadline;
    private readonly string _threadName;
    private readonly Channel<TChannel> _ready = Channel.CreateUnbounded<TChannel>(new UnboundedChannelOptions { SingleWriter = false });
    private readonly SemaphoreSlim _pendingSlots = new(MaxPending, MaxPending);
    private readonly CancellationTokenSource _stop = new();

    /// <summary>One count while the queue is open, one per handshake running.</summary>
    private readonly CountdownEvent _running = new(1);
    private readonly Thread _acceptThread;
    private int _disposed;

    /// <summary>Starts accepting on <paramref name="listening"/> (bound and listening), which the queue now owns.</summary>
    public HandshakeQueue(Socket listening, Func<Socket, CancellationToken, TChannel?> handshake, TimeSpan deadline, string threadName)
    {
        _listening = listening;
        _handshake = handshake;
        _deadline = deadline;
        _threadName = threadName;
        _acceptThread = new Thread(static s => ((HandshakeQueue<TChannel>)s!).AcceptLoop()) { IsBackground = true, Name = threadName + " accept" };
        _acceptThread.UnsafeStart(this);
    }

    /// <summary>Waits for the next channel whose handshake completed.</summary>
    /// <exception cref="ObjectDisposedException">The queue was disposed.</exception>
    public async ValueTask<TChannel> AcceptAsync(CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        try
        {
            TChannel channel = await _ready.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
            _pendingSlots.Release();
            return channel;
        }
        catch (ChannelClosedException)
        {
            throw new ObjectDisposedException(GetType().Name);
        }
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
        _listening.Dispose();
        _ready.Writer.TryComplete();
        // No caller code runs on the accept or handshake threads, so none of them is calling this.
        bool ended = _acceptThread.Join(s_disposeWait);
        _running.Signal();
        ended &= _running.Wait(s_disposeWait);
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
        while (!stop.IsCancellationRequested)
        {
            Socket peer;
            try
            {
                _pendingSlots.Wait(stop);
                peer = _listening.Accept();
            }
            catch (SocketException) when (!stop.IsCancellationRequested)
            {
                // The peer reset before we took it, or a transient shortage (file descriptors): keep listening.
                _pendingSlots.Release();
                continue;
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                return; // disposed
            }
            if (!_running.TryAddCount())
            {
                peer.Dispose();
                return;
            }
            new Thread(() => Establish(peer)) { IsBackground = true, Name = _threadName + " handshake" }.UnsafeStart();
        }
    }

    private void Establish(Socket peer)
    {
        try
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(_stop.Token);
            if (_deadline != Timeout.InfiniteTimeSpan)
            {
                deadline.CancelAfter(_deadline);
            }
            TChannel? channel = _handshake(peer, deadline.Token);
            if (channel is null)
            {
                _pendingSlots.Release();
            }
            else if (!_ready.Writer.TryWrite(channel))
            {
                channel.Dispose(); // disposed meanwhile
                _pendingSlots.Release();
            }
        }
        catch (Exception)
        {
            // A fault in one handshake must not end the server: that peer sees its socket close.
            peer.Dispose();
            _pendingSlots.Release();
        }
        finally
        {
            _running.Signal();
        }
    }
}
