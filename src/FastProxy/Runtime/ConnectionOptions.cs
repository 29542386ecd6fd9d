namespace XCall;

/// <summary>Settings of one connection, shared by every transport.</summary>
public sealed record ConnectionOptions
{
    /// <summary>The largest allowed <see cref="MaxConcurrentCalls"/>: 1,048,576.</summary>
    public const int MaxConcurrentCallsLimit = 1 << 20;

    /// <summary>The largest allowed <see cref="MaxConcurrentArgumentBytes"/>: 256 GiB, no bound in practice.</summary>
    public const long MaxConcurrentArgumentBytesLimit = 1L << 38;

    /// <summary>The largest allowed <see cref="StreamBatchBytes"/>: 16 MiB.</summary>
    public const int StreamBatchBytesLimit = 16 << 20;

    /// <summary>The largest allowed <see cref="StreamBatchItems"/>: 1,048,576.</summary>
    public const int StreamBatchItemsLimit = 1 << 20;

    /// <summary>The defaults.</summary>
    public static ConnectionOptions Default { get; } = new();

    /// <summary>How long a call waits for its reply before it fails with <see cref="XCallTimeoutException"/>. Default infinite.</summary>
    public TimeSpan CallTimeout { get; init; } = Timeout.InfiniteTimeSpan;

    /// <summary>Where received calls run. Default <see cref="DispatchMode.Concurrent"/>.</summary>
    public DispatchMode DispatchMode { get; init; } = DispatchMode.Concurrent;

    /// <summary>
    /// With <see cref="DispatchMode.Concurrent"/>: the most calls received on this connection that may be queued
    /// for the thread pool or running at once, from 1 to <see cref="MaxConcurrentCallsLimit"/>. Default 16,384:
    /// a burst of async calls the peer pipelines is queued almost whole (the receiving thread outruns the pool),
    /// and a queued call with small arguments holds about 0.5 KB, so the default takes bursts of thousands and
    /// holds at most about 8 MB. Past it a call that expects a reply is refused without running (the caller gets
    /// <see cref="XCallServerBusyException"/>), and a <see cref="OneWayAttribute">one-way</see> call runs on the
    /// receiving thread, which holds back the sender (docs/remoting.md, "Dispatch"). A call counts until its
    /// reply is sent, so a peer that keeps at most this many calls in flight is never refused for it.
    /// </summary>
    public int MaxConcurrentCalls { get; init; } = 16_384;

    /// <summary>
    /// With <see cref="DispatchMode.Concurrent"/>: the most bytes of arguments that the calls queued or running on
    /// this connection may hold, from 1 to <see cref="MaxConcurrentArgumentBytesLimit"/>. Default 64 MiB: without
    /// it, large arguments could make the calls of <see cref="MaxConcurrentCalls"/> hold that many frames (up to
    /// 64 MiB each over TCP). A call is admitted while less than this is held, so one call larger than the bound
    /// still runs. Past it, calls are treated as past <see cref="MaxConcurrentCalls"/>.
    /// </summary>
    public long MaxConcurrentArgumentBytes { get; init; } = 64L << 20;

    /// <summary>
    /// The most bytes of unmanaged items one batch of an <see cref="IAsyncEnumerable{T}"/> stream carries (at least one
    /// item), from 1 to <see cref="StreamBatchBytesLimit"/>. Default 64 KiB: 16,384 ints per batch, enough that the
    /// round trip per batch costs little per item. The consumer asks for batches of this size; the producer sends at
    /// most what its own setting allows (docs/remoting.md, "Streams").
    /// </summary>
    public int StreamBatchBytes { get; init; } = 64 * 1024;

    /// <summary>
    /// The most items of any other type (strings, data objects) one batch of an <see cref="IAsyncEnumerable{T}"/>
    /// stream carries, from 1 to <see cref="StreamBatchItemsLimit"/>. Default 1,024; lower it for large items, as a
    /// batch is marshalled into one frame.
    /// </summary>
    public int StreamBatchItems { get; init; } = 1024;

    /// <summary>Limits applied to every payload read from the peer.</summary>
    public Marshal.MarshalLimits Limits { get; init; } = Marshal.MarshalLimits.Default;

    /// <summary>Checks every option's range; a connection checks them when it is made.</summary>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of its range.</exception>
    public void Validate()
    {
        if (MaxConcurrentCalls < 1 || MaxConcurrentCalls > MaxConcurrentCallsLimit)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxConcurrentCalls), MaxConcurrentCalls, $"MaxConcurrentCalls must be between 1 and {MaxConcurrentCallsLimit}.");
        }
        if (MaxConcurrentArgumentBytes < 1 || MaxConcurrentArgumentBytes > MaxConcurrentArgumentBytesLimit)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxConcurrentArgumentBytes), MaxConcurrentArgumentBytes, $"MaxConcurrentArgumentBytes must be between 1 and {MaxConcurrentArgumentBytesLimit}.");
        }
        if (StreamBatchBytes < 1 || StreamBatchBytes > StreamBatchBytesLimit)
        {
            throw new ArgumentOutOfRangeException(nameof(StreamBatchBytes), StreamBatchBytes, $"StreamBatchBytes must be between 1 and {StreamBatchBytesLimit}.");
        }
        if (StreamBatchItems < 1 || StreamBatchItems > StreamBatchItemsLimit)
        {
            throw new ArgumentOutOfRangeException(nameof(StreamBatchItems), StreamBatchItems, $"StreamBatchItems must be between 1 and {StreamBatchItemsLimit}.");
        }
    }
}
