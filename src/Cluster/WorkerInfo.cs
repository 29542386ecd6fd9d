namespace XCall.Cluster;

/// <summary>A worker host found by <see cref="ClusterWorld.FindWorkersAsync"/>: where to reach it and how many processes it runs at once.</summary>
/// <param name="Name">Its entry: <c>rank</c>N for a rank of the world, <c>pid</c>N<c>@</c>node for an <c>xcall worker</c> of this machine, or the address given in <c>XCALL_WORKERS</c>.</param>
/// <param name="Address">The address its services answer at: <c>shm://</c> on this node, <c>tcp://</c> otherwise.</param>
/// <param name="Slots">How many processes it runs at once (0 when the worker was named by address and did not say).</param>
public sealed record WorkerInfo(string Name, string Address, int Slots);
