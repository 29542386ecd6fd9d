namespace XCall.Channels.Distributed;

/// <summary>
/// The remote ends of buffered channels in this process that hold values their hosts have not yet confirmed in the
/// channels (in a batch, or sent and unanswered). Every operation on another named construct (a remote channel end,
/// a barrier, a bucket, another buffered channel) confirms them first, so whatever this process does next happens
/// after its buffered values are in their buffers, as with in-process channels.
/// </summary>
internal static class Unconfirmed
{
    // Design: s_lock guards s_writers; s_count mirrors its size for the lock-free check on every operation. A writer
    // adds itself under its own gate when it takes a value and removes itself once its host confirmed all it sent.
    private static readonly Lock s_lock = new();
    private static readonly HashSet<IConfirmable> s_writers = [];
    private static volatile int s_count;

    /// <summary>How many writers hold unconfirmed values.</summary>
    public static int Count => s_count;

    public static void Add(IConfirmable writer)
    {
        lock (s_lock)
        {
            s_writers.Add(writer);
            s_count = s_writers.Count;
        }
    }

    public static void Remove(IConfirmable writer)
    {
        lock (s_lock)
        {
            s_writers.Remove(writer);
            s_count = s_writers.Count;
        }
    }

    /// <summary>Waits until the hosts confirmed the values of every writer but <paramref name="except"/>.</summary>
    public static void ConfirmAll(IConfirmable? except = null)
    {
        if (s_count != 0)
        {
            ConfirmAllAsync(except).GetAwaiter().GetResult();
        }
    }

    /// <summary>Completes when the hosts confirmed the values of every writer but <paramref name="except"/>.</summary>
    public static async Task ConfirmAllAsync(IConfirmable? except = null)
    {
        if (s_count == 0)
        {
            return;
        }
        IConfirmable[] writers;
        lock (s_lock)
        {
            writers = [.. s_writers];
        }
        foreach (IConfirmable writer in writers)
        {
            if (!ReferenceEquals(writer, except))
            {
                await writer.ConfirmAsync().ConfigureAwait(false);
            }
        }
    }
}

/// <summary>A writer whose values its host confirms on request.</summary>
internal interface IConfirmable
{
    /// <summary>Sends what is batched; completes once the host put every value sent so far into the channel (or the channel ended, or the host is gone: the next write says so).</summary>
    Task ConfirmAsync();
}
