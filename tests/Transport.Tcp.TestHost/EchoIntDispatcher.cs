using XCall.Marshal;
using XCall.Runtime.CompilerServices;
using XCall.Runtime;

namespace XCall.Transport.Tcp.TestHost;

/// <summary>A hand-written dispatcher for <c>int Echo(int)</c>, standing in for a generated one.</summary>
public sealed class EchoIntDispatcher : Dispatcher
{
    public const uint MethodId = 0x1234;

    public override string ContractName => "ITestEcho";

    public override ulong ContractHash => 42;

    public override string GetMethodName(uint methodId) => methodId == MethodId ? "Echo" : $"0x{methodId:x8}";

    public override ValueTask Dispatch(object target, uint methodId, ref MarshalReader args, ServerCall call)
    {
        if (methodId != MethodId)
        {
            throw UnknownMethod(methodId);
        }
        int value = args.ReadInt32();
        MarshalWriter writer = call.BeginReply();
        writer.WriteInt32(value);
        call.EndReply(ref writer);
        return default;
    }
}
