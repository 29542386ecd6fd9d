using XCall.Marshal;
using XCall.Runtime;
using XCall.Runtime.CompilerServices;

namespace XCall.Parallel.Host;

/// <summary>The dispatcher of a released object: every call throws <see cref="ObjectDisposedException"/> naming it.</summary>
internal sealed class ReleasedDispatcher(string contract, ulong objectId, int rank) : Dispatcher
{
    public override string ContractName => contract;

    public override ulong ContractHash => 0;

    public override ValueTask Dispatch(object target, uint methodId, ref MarshalReader args, ServerCall call) =>
        throw new ObjectDisposedException(contract, $"The parallel object {objectId} ({contract}) on rank {rank} was released.");

    public override string GetMethodName(uint methodId) => $"0x{methodId:x8}";
}
