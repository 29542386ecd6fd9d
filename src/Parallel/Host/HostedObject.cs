using XCall.Runtime;

namespace XCall.Parallel.Host;

/// <summary>An object a rank hosts: the target, its contract's dispatcher and name.</summary>
internal sealed record HostedObject(object Target, Dispatcher Dispatcher, string Contract);
