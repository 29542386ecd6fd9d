namespace XCall.Parallel;

/// <summary>Settings of a <see cref="ParallelWorld"/>.</summary>
public sealed record ParallelWorldOptions
{
    /// <summary>The defaults.</summary>
    public static ParallelWorldOptions Default { get; } = new();

    /// <summary>Where new objects go. Default <see cref="PlacementPolicy.RoundRobin"/>.</summary>
    public PlacementPolicy Placement { get; init; } = PlacementPolicy.RoundRobin;

    /// <summary>How one-way calls are aggregated. Default <see cref="AggregationOptions.Default"/>.</summary>
    public AggregationOptions Aggregation { get; init; } = AggregationOptions.Default;

    /// <summary>
    /// With <see cref="Agglomeration.Adaptive"/>: a new object is created locally when its contract's measured grain
    /// is below this many times the overhead of a remote call (<see cref="GrainMeasurement.OverheadNanoseconds"/>). Default 2:
    /// a call goes to another rank only when it moves away at least twice the work that moving it adds, since the probe
    /// and the overhead are each timed in a few milliseconds and a grain near the overhead would be placed one way or
    /// the other from run to run, and since the other rank's cores may be busy (its time per call is then a multiple
    /// of the probe's).
    /// </summary>
    public double GrainFactor { get; init; } = 2.0;

    /// <summary>
    /// Releases an object on another rank once every proxy of it is collected: each proxy (made by
    /// <see cref="ParallelWorld.CreateAsync{T}"/> or <see cref="ParallelWorld.AttachAsync{T}"/>, on any rank) holds it;
    /// when the garbage collector took one, the calls its rank held for the object are sent and run, then its hold is
    /// dropped, and the last drop releases the object as <see cref="ParallelWorld.ReleaseAsync"/> does. Keep a proxy
    /// while its <see cref="ParallelRef"/> travels to another rank: a reference is not a hold. Objects made in the
    /// caller's process are not proxies and are released explicitly. Default false (objects live until released or
    /// the world is left).
    /// </summary>
    public bool ReleaseWhenCollected { get; init; }

    /// <summary>With <see cref="Agglomeration.Adaptive"/>: the calls of a contract measured before its grain decides. Default 1,000.</summary>
    public long MinMeasuredCalls { get; init; } = 1000;
}
