using XCall.Marshal;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>
/// Serves the requests of a stream's consumer on its <see cref="StreamProducer{T, TItems}"/>: Next (int32 most items;
/// the reply is a byte, 1 on the last batch, then the batch) and Close (a boolean: the consumer cancelled; an empty reply
/// once the producer is disposed). docs/remoting.md, "Streams".
/// </summary>
internal sealed class StreamDispatcher<T, TItems> : Dispatcher where TItems : IStreamItems<T>
{
    public const uint NextMethod = 1;
    public const uint CloseMethod = 2;

    /// <summary>What both sides of a stream agree on: the wire shape above. The item type is the method's, whose
    /// contract hash covers it.</summary>
    public const ulong Hash = 0x58_43_61_6c_6c_53_74_31UL; // "XCallSt1"

    public static readonly StreamDispatcher<T, TItems> Instance = new();

    private StreamDispatcher() => ContractName = $"IAsyncEnumerable<{typeof(T).Name}>";

    public override string ContractName { get; }

    public override ulong ContractHash => Hash;

    public override ValueTask Dispatch(object target, uint methodId, ref MarshalReader args, ServerCall call)
    {
        var producer = (StreamProducer<T, TItems>)target;
        switch (methodId)
        {
            case NextMethod:
                int maxItems = args.Read<int>();
                args.EnsureFullyConsumed();
                call.ArgumentsRead(oneWayMethod: false);
                if (maxItems < 1)
                {
                    StreamErrors.ThrowBadRequest(maxItems);
                }
                return producer.Next(call, maxItems);
            case CloseMethod:
                bool cancel = args.ReadBoolean();
                args.EnsureFullyConsumed();
                call.ArgumentsRead(oneWayMethod: false);
                return producer.Close(call, cancel);
            default:
                throw UnknownMethod(methodId);
        }
    }

    public override string GetMethodName(uint methodId) => methodId switch
    {
        NextMethod => "Next",
        CloseMethod => "Close",
        _ => "0x" + methodId.ToString("x8"),
    };
}
