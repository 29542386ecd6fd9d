namespace XCall.Transport;

/// <summary>
/// One thread for the heartbeats of every channel in the process (TCP and shared memory), rather than a thread or a timer per
/// channel. It ticks at a quarter of the shortest heartbeat interval or timeout registered (10 ms to 250 ms)
/// and ends when no channel is left. A thread of its own rather than a <see cref="Timer"/>: timer callbacks
/// run on the thread pool, and a starved pool (callers blocking pool threads) would delay pings long
/// enough for a healthy peer to be declared dead.
/// </summary>
/// <remarks>
/// Design: registration copies the channel array under <see cref="s_lock"/> (rare); a tick reads the array
/// without the lock and works on that snapshot, so a channel that closes during a tick is simply skipped
/// by its own closed check. Only the heartbeat thread ticks, so ticks never overlap. The thread never
/// blocks on a channel: pings it cannot send at once, and closes (which run handlers' code), go to the thread pool.
/// </remarks>
public static class HeartbeatScheduler
{
    private const long MinPeriodMs = 10;
    private const long MaxPeriodMs = 250;

    private static readonly object s_lock = new();
    private static Entry[] s_entries = [];
    private static Thread? s_thread;
    private static long s_periodMs;

    private readonly record struct Entry(IHeartbeatChannel Channel, long PeriodMs);

    /// <summary>Current tick period in milliseconds (0 when stopped); for tests.</summary>
    internal static long PeriodMs
    {
        get
        {
            lock (s_lock)
            {
                return s_thread is null ? 0 : s_periodMs;
            }
        }
    }

    /// <summary>Starts ticking <paramref name="channel"/>, at most every quarter of <paramref name="shortestMs"/> (its
    /// shortest heartbeat interval or timeout); starts the thread when it is the first channel.</summary>
    public static void Register(IHeartbeatChannel channel, long shortestMs)
    {
        long period = Math.Clamp(shortestMs / 4, MinPeriodMs, MaxPeriodMs);
        lock (s_lock)
        {
            s_entries = [.. s_entries, new Entry(channel, period)];
            if (s_thread is null)
            {
                s_periodMs = period;
                s_thread = new Thread(Run) { IsBackground = true, Name = "XCall heartbeat" };
                s_thread.UnsafeStart();
            }
            else if (period < s_periodMs)
            {
                s_periodMs = period;
                Monitor.PulseAll(s_lock);
            }
        }
    }

    /// <summary>Stops ticking <paramref name="channel"/>; the thread ends when no channel is left.</summary>
    public static void Unregister(IHeartbeatChannel channel)
    {
        lock (s_lock)
        {
            int index = Array.FindIndex(s_entries, e => ReferenceEquals(e.Channel, channel));
            if (index < 0)
            {
                return;
            }
            Entry[] next = new Entry[s_entries.Length - 1];
            Array.Copy(s_entries, next, index);
            Array.Copy(s_entries, index + 1, next, index, next.Length - index);
            s_entries = next;
            long period = MaxPeriodMs;
            foreach (Entry e in next)
            {
                period = Math.Min(period, e.PeriodMs);
            }
            s_periodMs = period;
            if (next.Length == 0)
            {
                Monitor.PulseAll(s_lock);
            }
        }
    }

    private static void Run()
    {
        long previous = Environment.TickCount64;
        while (true)
        {
            Entry[] entries;
            long period;
            lock (s_lock)
            {
                if (s_entries.Length != 0)
                {
                    Monitor.Wait(s_lock, (int)s_periodMs);
                }
                if (s_entries.Length == 0)
                {
                    s_thread = null;
                    return;
                }
                entries = s_entries;
                period = s_periodMs;
            }
            long now = Environment.TickCount64;
            // A tick later than asked means this process did not run for that long (CPU starvation, a GC
            // pause, SIGSTOP): its receive threads did not read either, so that much silence is ours, not
            // the peers'.
            long stalledMs = Math.Max(0, now - previous - 2 * period);
            previous = now;
            foreach (Entry entry in entries)
            {
                try
                {
                    entry.Channel.OnHeartbeatTick(now, stalledMs);
                }
                catch (Exception)
                {
                    // A handler's OnClosed threw on this thread: that must not stop the other channels'
                    // heartbeats, nor take the process down.
                }
            }
        }
    }
}
