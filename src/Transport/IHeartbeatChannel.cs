namespace XCall.Transport;

/// <summary>A channel whose liveness the shared heartbeat thread watches.</summary>
public interface IHeartbeatChannel
{
    /// <summary>Called by the shared heartbeat thread, never concurrently with itself; <paramref name="stalledMs"/>
    /// is how long this process did not run since the last tick, which does not count as the peer's silence.</summary>
    void OnHeartbeatTick(long now, long stalledMs);
}
