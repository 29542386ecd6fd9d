namespace XCall.Parallel;

/// <summary>
/// How one-way calls to a rank's objects are aggregated: held calls leave as one message when they reach
/// <see cref="MaxCalls"/> or <see cref="MaxBytes"/>, when the oldest has waited <see cref="MaxDelay"/>, before any
/// call that expects a reply, and on <see cref="ParallelWorld.Flush"/>.
/// </summary>
public sealed record AggregationOptions
{
    /// <summary>The defaults: 4,096 calls, 64 KiB, 1 ms.</summary>
    public static AggregationOptions Default { get; } = new();

    /// <summary>No aggregation: every one-way call leaves as its own message.</summary>
    public static AggregationOptions None { get; } = new() { MaxCalls = 1 };

    /// <summary>The most calls one message carries. Default 4,096.</summary>
    public int MaxCalls { get; init; } = 4096;

    /// <summary>
    /// The bytes of frames past which the held calls leave. Default 64 KiB: a batch stays below the large-object
    /// heap's threshold on both sides (a one-way call with an int argument takes 32 bytes, so 2,048 of them).
    /// </summary>
    public int MaxBytes { get; init; } = 64 << 10;

    /// <summary>The longest a one-way call is held before it leaves. Default 1 ms.</summary>
    public TimeSpan MaxDelay { get; init; } = TimeSpan.FromMilliseconds(1);
}
