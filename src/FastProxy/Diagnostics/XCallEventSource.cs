using System.Diagnostics.Tracing;

namespace XCall.Diagnostics;

/// <summary>
/// XCall's marshalling-cost events (EventSource name <c>XCall</c>). When no listener enables it, the cost
/// on the call path is one enabled-check per call. <c>xcall-profile</c> reads these events over EventPipe.
/// </summary>
/// <remarks>
/// Event 1 <c>CallCompleted</c>, one per call and side, fields in this order:
/// Contract (string, full interface name), Method (string), Side (string: "client" or "server"),
/// Endpoint (string, the peer's address), RequestBytes (long, argument payload), ReplyBytes (long,
/// result payload), MarshalNanoseconds (long: writing arguments and reading results on the client;
/// reading arguments and writing results on the server), TransportNanoseconds (long: client only, from
/// publishing the request to having the reply, minus nothing; 0 on the server), TargetNanoseconds (long:
/// server only, time in the target method; 0 on the client), Failed (bool).
/// </remarks>
[EventSource(Name = "XCall")]
public sealed class XCallEventSource : EventSource
{
    /// <summary>The one instance.</summary>
    public static readonly XCallEventSource Log = new();

    /// <summary>Event id of <see cref="CallCompleted"/>.</summary>
    public const int CallCompletedId = 1;

    private XCallEventSource()
    {
    }

    /// <summary>Keywords of the XCall events.</summary>
    public static class Keywords
    {
        /// <summary>One event per completed call.</summary>
        public const EventKeywords Calls = (EventKeywords)1;
    }

    /// <summary>True when a listener wants per-call events.</summary>
    public bool CallsEnabled => IsEnabled(EventLevel.Informational, Keywords.Calls);

    /// <summary>One call finished on one side; see the class remarks for the fields.</summary>
    [Event(CallCompletedId, Level = EventLevel.Informational, Keywords = Keywords.Calls)]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "Every field is a primitive or a string.")]
    public unsafe void CallCompleted(
        string Contract,
        string Method,
        string Side,
        string Endpoint,
        long RequestBytes,
        long ReplyBytes,
        long MarshalNanoseconds,
        long TransportNanoseconds,
        long TargetNanoseconds,
        bool Failed)
    {
        fixed (char* contract = Contract)
        fixed (char* method = Method)
        fixed (char* side = Side)
        fixed (char* endpoint = Endpoint)
        {
            int failed = Failed ? 1 : 0;
            EventData* data = stackalloc EventData[10];
            data[0] = Text(contract, Contract);
            data[1] = Text(method, Method);
            data[2] = Text(side, Side);
            data[3] = Text(endpoint, Endpoint);
            data[4] = Value(&RequestBytes, sizeof(long));
            data[5] = Value(&ReplyBytes, sizeof(long));
            data[6] = Value(&MarshalNanoseconds, sizeof(long));
            data[7] = Value(&TransportNanoseconds, sizeof(long));
            data[8] = Value(&TargetNanoseconds, sizeof(long));
            data[9] = Value(&failed, sizeof(int));
            WriteEventCore(CallCompletedId, 10, data);
        }
    }

    private static unsafe EventData Text(char* chars, string text) =>
        new() { DataPointer = (IntPtr)chars, Size = (text.Length + 1) * sizeof(char) };

    private static unsafe EventData Value(void* value, int size) =>
        new() { DataPointer = (IntPtr)value, Size = size };
}
