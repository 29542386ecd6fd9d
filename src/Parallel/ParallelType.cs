using XCall.Runtime;

namespace XCall.Parallel;

/// <summary>
/// A contract of <see cref="ParallelTypes"/>: how to make its objects and how they are placed. <paramref name="Probe"/>,
/// when given, prepares an object made by <paramref name="Create"/> only to be timed and returns one representative call.
/// </summary>
internal sealed record ParallelType(Type Interface, string Contract, ulong Hash, Dispatcher Dispatcher, Func<object> Create, Agglomeration Agglomeration, Func<object, Action>? Probe = null);
