using XCall.Runtime;

namespace XCall.Parallel;

/// <summary>A contract of <see cref="ParallelTypes"/>: how to make its objects and how they are placed.</summary>
internal sealed record ParallelType(Type Interface, string Contract, ulong Hash, Dispatcher Dispatcher, Func<object> Create, Agglomeration Agglomeration);
