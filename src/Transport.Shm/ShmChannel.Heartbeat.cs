using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm;

// Design: a peer whose process is stopped (SIGSTOP, a debugger, a frozen container) keeps its socket open,
// so the end-of-file that reports a dead peer never comes. Each side therefore counts a heartbeat word in
// the control block of the ring it produces into (RingLayout.HeartbeatOffset), from the process's shared
// heartbeat thread (HeartbeatScheduler: a thread of its own, never the thread pool, so a busy process still
// beats), and reads the peer's in the ring it consumes. No frame, no wake-up and no system call: a store and
// a load of one cache line per tick. The tick holds a reference on the segment, so a channel that closes
// meanwhile cannot unmap the words under it. Ticks that came late (this process did not run) push the
// peer's deadline back by as much: our silence is not the peer's.
internal sealed partial class ShmChannel : IHeartbeatChannel
{
    // The shortest period the scheduler is asked for: it ticks at a quarter of it (250 ms), so a peer's check
    // of at least 1 s sees four beats or more.
    private const long BeatPeriodMs = 1000;

    private long _beats;
    private long _peerBeat;
    private long _peerBeatTick;
    private long _heartbeatTimeoutMs;

    private void StartHeartbeat()
    {
        _heartbeatTimeoutMs = _options.HeartbeatTimeout == Timeout.InfiniteTimeSpan ? -1 : (long)_options.HeartbeatTimeout.TotalMilliseconds;
        _peerBeatTick = Environment.TickCount64;
        HeartbeatScheduler.Register(this, BeatPeriodMs);
    }

    private void StopHeartbeat() => HeartbeatScheduler.Unregister(this);

    /// <inheritdoc/>
    public unsafe void OnHeartbeatTick(long now, long stalledMs)
    {
        if (Volatile.Read(ref _stopping) != 0 || !_segment.TryAddRef())
        {
            return;
        }
        try
        {
            Volatile.Write(ref *_outgoing.Heartbeat, ++_beats);
            long peer = Volatile.Read(ref *_incoming.Heartbeat);
            _peerBeatTick += stalledMs;
            if (peer != _peerBeat)
            {
                _peerBeat = peer;
                _peerBeatTick = now;
            }
            else if (_heartbeatTimeoutMs >= 0 && now - _peerBeatTick >= _heartbeatTimeoutMs)
            {
                // Still holding the mapping: stopping wakes this side's sleepers through words in the segment.
                RequestStop(StopKind.Fault, new XCallDisconnectedException(_endpoint,
                    $"the peer process did not run for {_heartbeatTimeoutMs} ms (its heartbeat in the shared segment stopped; a stopped or frozen process): taken for dead"));
            }
        }
        finally
        {
            _segment.ReleaseRef();
        }
    }
}
