namespace XCall.Bench;

/// <summary>
/// A CPU load for the oversubscription rows (<c>--load N</c>): this program started again with <c>--busy N</c>,
/// in its own process (as <c>stress-ng --cpu N</c> would be), running N threads that never wait. It prints READY
/// once every thread runs and exits when its standard input closes.
/// </summary>
internal sealed class BusyLoad(ChildServer child, int threads) : IDisposable
{
    /// <summary>The busy threads.</summary>
    public int Threads => threads;

    /// <summary>How rows measured under this load are labelled.</summary>
    public string Label => $"load: {Threads} busy thread{(Threads == 1 ? "" : "s")}";

    /// <summary>Starts the load and returns once all its threads run.</summary>
    public static BusyLoad Start(int threads) =>
        new(ChildServer.Start(["--busy", threads.ToString(System.Globalization.CultureInfo.InvariantCulture)], "The busy-load process"), threads);

    /// <summary>Entry point of the load process.</summary>
    public static int Serve(int threads)
    {
        using var running = new CountdownEvent(threads);
        var stop = 0;
        for (int i = 0; i < threads; i++)
        {
            var thread = new Thread(() =>
            {
                running.Signal();
                ulong x = 1;
                while (Volatile.Read(ref stop) == 0)
                {
                    for (int j = 0; j < 10_000; j++)
                    {
                        x = (x * 6364136223846793005UL) + 1442695040888963407UL;
                    }
                }
                GC.KeepAlive(x);
            })
            { IsBackground = true, Name = $"busy {i}" };
            thread.Start();
        }
        running.Wait();
        Console.WriteLine("READY busy");
        Console.Out.Flush();
        while (Console.In.ReadLine() is not null)
        {
        }
        Volatile.Write(ref stop, 1);
        return 0;
    }

    /// <summary>Stops the load (its process exits).</summary>
    public void Dispose() => child.Dispose();
}
