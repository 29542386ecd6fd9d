namespace XCall.Transport;

/// <summary>
/// One thread per process that looks, about once a millisecond, at the channels whose receive threads run detached
/// frames (<see cref="DetachedFrames"/>); it sleeps while no channel detached a frame for a while.
/// </summary>
// Design: s_channels and DetachedFrames.Watched change under s_lock only. A run that finds its channel not watched
// calls Track (rare: the first run after an idle spell); the watch drops a channel only under s_lock and finding
// Watched false, so a Track that raced with the drop adds it again. A thread of its own rather than a timer: timer
// callbacks run on the thread pool, which the very calls it watches for may be starving.
internal static class DetachWatch
{
    private const int TickMs = 1;

    private static readonly object s_lock = new();
    private static readonly List<DetachedFrames> s_channels = [];
    private static Thread? s_thread;

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
        while (true)
        {
            lock (s_lock)
            {
                while (s_channels.Count == 0)
                {
                    Monitor.Wait(s_lock);
                }
                looked.Clear();
                looked.AddRange(s_channels);
            }
            Thread.Sleep(TickMs);
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
        }
    }
}
