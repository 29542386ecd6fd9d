using XCall.Marshal;
using XCall.Runtime;
using XCall.Runtime.CompilerServices;

namespace XCall.Parallel.Host;

/// <summary>
/// The dispatcher a hosted object is exposed with on its <see cref="ObjectRunner"/>'s connection: the contract's own,
/// plus, after a one-way call that completed, the one-way calls that follow it in the segment
/// (<see cref="ObjectRunner.DispatchRest"/>). The connection sees the run as one call: a failure in it is reported
/// for the frame that threw, and call telemetry counts the run once.
/// </summary>
internal sealed class RunDispatcher(ObjectRunner runner, Dispatcher inner) : Dispatcher
{
    public override string ContractName => inner.ContractName;

    public override ulong ContractHash => inner.ContractHash;

    public override ValueTask Dispatch(object target, uint methodId, ref MarshalReader args, ServerCall call)
    {
        ValueTask pending = inner.Dispatch(target, methodId, ref args, call);
        return pending.IsCompletedSuccessfully && runner.DispatchingOneWay
            ? runner.DispatchRest(inner, target, args.Context, call)
            : pending;
    }

    public override string GetMethodName(uint methodId) => inner.GetMethodName(methodId);
}
