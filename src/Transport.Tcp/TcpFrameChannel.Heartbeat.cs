namespace XCall.Transport.Tcp;

// Design: the hot paths only bump counters (_sendCount by the flusher, _receiveCount by the receive thread)
// and the receive thread flags _receiving while it is blocked waiting for bytes. The shared timer
// (HeartbeatScheduler, one for all channels) compares them with what it saw last: no sends for
// HeartbeatInterval queues a ping; no bytes received for HeartbeatTimeout while the receive thread was
// waiting closes the channel. Time spent in the handler (a long inline call) never counts as silence: the
// peer's bytes then wait in the kernel, unread by us, not unsent by it. Pings (heartbeat thread) and pongs
// (receive thread) are sent inline only when that cannot block: the send side is idle and the socket is
// writable. Otherwise they go to a pool thread: neither the receive thread (which must keep reading, or
// two peers blocked in send would deadlock) nor the shared heartbeat thread may ever wait for the peer.
internal sealed partial class TcpFrameChannel : IHeartbeatChannel
{
    private readonly ControlSender _controlSender;
    private long _intervalMs;
    private long _timeoutMs;
    private long _receiveSeen;
    private long _sendSeen;
    private long _lastReceiveTick;
    private long _lastSendTick;
    private int _controlQueued;
    private int _heartbeatClosing;
    private int _pingOwed;
    private int _pongOwed;
    private ulong _pongCallId;

    private void StartHeartbeat()
    {
        _intervalMs = _options.HeartbeatInterval == Timeout.InfiniteTimeSpan ? -1 : (long)_options.HeartbeatInterval.TotalMilliseconds;
        _timeoutMs = _options.HeartbeatTimeout == Timeout.InfiniteTimeSpan ? -1 : (long)_options.HeartbeatTimeout.TotalMilliseconds;
        _lastReceiveTick = _lastSendTick = Environment.TickCount64;
        if (_intervalMs >= 0 || _timeoutMs >= 0)
        {
            long shortest = _intervalMs < 0 ? _timeoutMs : _timeoutMs < 0 ? _intervalMs : Math.Min(_intervalMs, _timeoutMs);
            HeartbeatScheduler.Register(this, shortest);
        }
    }

    private void StopHeartbeat() => HeartbeatScheduler.Unregister(this);

    /// <inheritdoc/>
    public void OnHeartbeatTick(long now, long stalledMs)
    {
        if (IsClosed)
        {
            return;
        }
        _lastReceiveTick += stalledMs;
        long received = Volatile.Read(ref _receiveCount);
        if (Volatile.Read(ref _receiving) == 0 || received != _receiveSeen)
        {
            _receiveSeen = received;
            _lastReceiveTick = now;
        }
        else if (_timeoutMs >= 0 && now - _lastReceiveTick >= _timeoutMs)
        {
            // On the pool: closing runs the handler's close (user code: Closed events, reconnects), and the shared
            // heartbeat thread beats for every channel of the process, shared-memory ones included, whose peers
            // would take this process for dead while it waited.
            if (Interlocked.Exchange(ref _heartbeatClosing, 1) == 0)
            {
                var error = new XCallDisconnectedException(_endpoint, $"no heartbeat for {_timeoutMs} ms");
                ThreadPool.UnsafeQueueUserWorkItem(static s => s.Channel.Close(s.Error, peerLost: true), (Channel: this, Error: error), preferLocal: false);
            }
            return;
        }

        long sent = SendCount;
        if (sent != _sendSeen)
        {
            _sendSeen = sent;
            _lastSendTick = now;
        }
        else if (_intervalMs >= 0 && now - _lastSendTick >= _intervalMs)
        {
            _lastSendTick = now;
            if (!TrySendControlNow(FrameKind.Ping, 0))
            {
                QueueControl(ref _pingOwed);
            }
        }
    }

    private void QueueControl(ref int owed)
    {
        Volatile.Write(ref owed, 1);
        if (Interlocked.Exchange(ref _controlQueued, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(_controlSender, preferLocal: false);
        }
    }

    private void SendOwedControlFrames()
    {
        Volatile.Write(ref _controlQueued, 0);
        if (Interlocked.Exchange(ref _pongOwed, 0) != 0)
        {
            SendControl(FrameKind.Pong, _pongCallId);
        }
        if (Interlocked.Exchange(ref _pingOwed, 0) != 0)
        {
            SendControl(FrameKind.Ping, 0);
        }
    }

    /// <summary>Sends owed pings and pongs on a pool thread (it may block when the peer does not read).</summary>
    private sealed class ControlSender(TcpFrameChannel channel) : IThreadPoolWorkItem
    {
        public void Execute()
        {
            try
            {
                channel.SendOwedControlFrames();
            }
            catch (Exception)
            {
                // A failed send closed the channel and the handler's OnClosed threw: nobody to tell here.
            }
        }
    }
}
