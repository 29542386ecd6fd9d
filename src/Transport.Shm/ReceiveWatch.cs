namespace XCall.Transport.Shm;

/// <summary>
/// One thread per process that looks, about once a millisecond, at the channels whose receive thread runs detached
/// frames (see ShmChannel.Detach.cs), and hands a channel's receiving to a new thread when its receive thread stays
/// inside one frame's work. It sleeps while no channel detached a frame for <c>WatchIdleTicks</c> looks.
/// </summary>
// Design: s_channels and ShmChannel.Watched change under s_lock only. A receive thread that finds its channel not
// watched calls Track (rare: the first detached frame after an idle spell); the watch drops a channel only while
// holding s_lock and finding Watched false, so a Track that raced with the drop adds it again.
internal static class ReceiveWatch
{
    private const int TickMs = 1;

    private static readonly object s_lock = new(); // Monitor.Wait needs an object
    private static readonly List<ShmChannel> s_channels = [];
    private static Thread? s_thread;

    public static void Track(ShmChannel channel)
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
                s_thread = new Thread(Run) { IsBackground = true, Name = "xcall shm receive watch" };
                s_thread.Start();
            }
            else if (s_channels.Count == 1)
            {
                Monitor.PulseAll(s_lock);
            }
        }
    }

    private static void Run()
    {
        var looked = new List<ShmChannel>();
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
            foreach (ShmChannel channel in looked)
            {
                bool keep;
                try
                {
                    keep = channel.WatchTick();
                }
                catch (Exception)
                {
                    keep = false; // a channel whose hand-over failed (no thread could start): it stays as it is
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
