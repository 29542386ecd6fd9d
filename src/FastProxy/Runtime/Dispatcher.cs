using System.ComponentModel;
using XCall.Marshal;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>Generated per <see cref="RemotableAttribute"/> interface: reads a call's arguments in place, invokes the target, writes the reply.</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class Dispatcher
{
    /// <summary>Full name of the contract interface.</summary>
    public abstract string ContractName { get; }

    /// <summary>Hash of the whole contract (every method signature), checked when a connection opens.</summary>
    public abstract ulong ContractHash { get; }

    /// <summary>
    /// Dispatches one call. Sync methods write their reply before returning a completed task; async
    /// methods return a task that writes the reply when the target's task ends. Exceptions thrown by the
    /// target propagate (synchronously or through the task) and become an error frame.
    /// </summary>
    public abstract ValueTask Dispatch(object target, uint methodId, ref MarshalReader args, ServerCall call);

    /// <summary>The name of the method with <paramref name="methodId"/> (for diagnostics), or its id in hex.</summary>
    public abstract string GetMethodName(uint methodId);

    /// <summary>Raised for a method id this contract does not have.</summary>
    protected XCallException UnknownMethod(uint methodId) =>
        new($"Contract {ContractName} (hash {ContractHash:x16}) has no method with id 0x{methodId:x8}; are both sides built from the same contract?");
}
