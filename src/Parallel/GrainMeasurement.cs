namespace XCall.Parallel;

/// <summary>
/// What the object manager measured of one contract's calls, the basis of <see cref="Agglomeration.Adaptive"/>: a
/// new object is created in the caller's process when <see cref="GrainNanoseconds"/> is below
/// <see cref="ParallelWorldOptions.GrainFactor"/> times <see cref="OverheadNanoseconds"/> (the work a call moves away is
/// less than the work moving it adds), once at least <see cref="ParallelWorldOptions.MinMeasuredCalls"/> calls were measured;
/// before that, when the contract was added with a grain probe, when <see cref="ProbeNanoseconds"/> is.
/// </summary>
/// <param name="Contract">The contract's name.</param>
/// <param name="Calls">How many of its calls ran on other ranks and were measured there.</param>
/// <param name="HostNanoseconds">Their mean time on the host, dispatch included.</param>
/// <param name="DispatchNanoseconds">The host's mean time to dispatch a call that does nothing (measured when the world was joined).</param>
/// <param name="CallerNanoseconds">What an aggregated one-way call costs its caller (measured when the world was joined).</param>
public sealed record GrainMeasurement(string Contract, long Calls, double HostNanoseconds, double DispatchNanoseconds, double CallerNanoseconds)
{
    /// <summary>
    /// The time of a call's method alone: <see cref="LeastBatchNanoseconds"/> (or <see cref="HostNanoseconds"/> when
    /// there is none) less <see cref="DispatchNanoseconds"/>, at least 0.
    /// </summary>
    public double GrainNanoseconds => Math.Max(0, (LeastBatchNanoseconds ?? HostNanoseconds) - DispatchNanoseconds);

    /// <summary>
    /// The least of the batches' mean times per call on the host, dispatch included, over the batches that carried at
    /// least 64 calls of the contract (null before one did): a batch during which the host was preempted, or ran code
    /// the JIT had not optimized yet, does not decide the grain, as a grain probe's least round decides it; a call
    /// that travels alone (a synchronous one, a cheap getter) does not either.
    /// </summary>
    public double? LeastBatchNanoseconds { get; init; }

    /// <summary>
    /// The mean time of the contract's grain probe (<see cref="ParallelTypes.SetGrainProbe{T}"/>), run
    /// directly in this process when its first object was created; null when it has no probe or none was created yet.
    /// </summary>
    public double? ProbeNanoseconds { get; init; }

    /// <summary>What running a call on another rank adds: the caller's cost of sending it and the host's of dispatching it.</summary>
    public double OverheadNanoseconds => CallerNanoseconds + DispatchNanoseconds;
}
