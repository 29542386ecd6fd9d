namespace XCall.Transport;

/// <summary>
/// One thread per process that looks, every one to four milliseconds, at the channels whose receive threads run
/// detached frames (<see cref="DetachedFrames"/>); it sleeps while no channel detached a frame for a while.
/// </summary>
// Design: s_channels and DetachedFrames.Watched change under s_lock only. A run that finds its channel not watched
// calls Track (rare: the first run after an idle spell); the watch drops a channel only under s_lock and finding
// Watched false, so a Track that raced with the drop adds it again. A thread of its own rather than a timer: timer
// callbacks run on the thread pool, which the very calls it watches for may be starving.
// The time between looks: MinTickMs after a look that found a run going on any channel (the next look tells a stuck
// run from one that moved on), else twice the last, up to MaxTickMs. Calls of a few microseconds are seldom caught
// running, so under a stream of them the watch wakes every MaxTickMs, not every millisecond: on two cores each wake-up
// takes a core from a thread that makes or serves the calls. A run that blocks is caught at the first look after it
// began and handed over at the next: within MaxTickMs + MinTickMs, plus the sleeps' slack.
internal static class DetachWatch
{
    private const int MinTickMs = 1;
    private const int MaxTickMs = 4;

    private static readonly object s_lock = new();
    private static readonly List<DetachedFrames> s_channels = [];
    private static Thread? s_thread;

    /// <summary>The sleep before the next look, after one of <paramref name="tickMs"/> whose looks found a run going
    /// (<paramref name="runSeen"/>) or not (see the design note).</summary>
    internal static int NextTickMs(int tickMs, bool runSeen) => runSeen ? MinTickMs : Math.Min(tickMs * 2, MaxTickMs);

    public static void Track(DetachedFrames channel)
    {
        lock (s_lock)
        {
            channel.Watched = true;
            if (!s_channels.Contains(channel))
            {
                s_channels.Add(channel);
            }
            if (s_thread is null)
            {
                s_thread = new Thread(Run) { IsBackground = true, Name = "xcall detach watch" };
                s_thread.UnsafeStart();
            }
            else if (s_channels.Count == 1)
            {
                Monitor.PulseAll(s_lock);
            }
        }
    }

    private static void Run()
    {
        var looked = new List<DetachedFrames>();
        int tickMs = MinTickMs;
        while (true)
        {
            lock (s_lock)
            {
                while (s_channels.Count == 0)
                {
                    tickMs = MinTickMs;
                    Monitor.Wait(s_lock);
                }
            }
            Thread.Sleep(tickMs);
            lock (s_lock)
            {
                // After the sleep: a channel tracked during a long one is looked at now, not a sleep later.
                looked.Clear();
                looked.AddRange(s_channels);
            }
            bool runSeen = false;
            foreach (DetachedFrames channel in looked)
            {
                bool keep;
                try
                {
                    keep = channel.Tick();
                }
                catch (Exception)
                {
                    keep = true; // a hand-over that could not start a thread: the process is out of resources, the channel stays as it is
                }
                runSeen |= channel.RunSeen;
                if (!keep)
                {
                    lock (s_lock)
                    {
                        if (!channel.Watched)
                        {
                            s_channels.Remove(channel);
                        }
                    }
                }
            }
            tickMs = NextTickMs(tickMs, runSeen);
        }
    }
}
