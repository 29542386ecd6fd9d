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
    /// is below this many times the overhead of a remote call (<see cref="GrainMeasurement.OverheadNanoseconds"/>). Default 1.
    /// </summary>
    public double GrainFactor { get; init; } = 1.0;

    /// <summary>With <see cref="Agglomeration.Adaptive"/>: the calls of a contract measured before its grain decides. Default 1,000.</summary>
    public long MinMeasuredCalls { get; init; } = 1000;
}
