using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace XCall.Diagnostics;

/// <summary>
/// XCall's meter (name <c>XCall</c>): per contract, method and side, the number of calls, payload sizes
/// and marshalling time. The shared-memory transport adds, under the same meter name, the bytes of arrays lent
/// instead of copied per endpoint (<c>xcall.lent.bytes</c>). Read it with dotnet-counters or a <see cref="MeterListener"/>.
/// </summary>
public static class XCallMetrics
{
    /// <summary>The meter's name.</summary>
    public const string MeterName = "XCall";

    private static readonly Meter s_meter = new(MeterName, "1.0");
    private static readonly Counter<long> s_calls = s_meter.CreateCounter<long>("xcall.calls", "{call}", "Completed calls");
    private static readonly Histogram<long> s_requestBytes = s_meter.CreateHistogram<long>("xcall.request.bytes", "By", "Argument payload per call");
    private static readonly Histogram<long> s_replyBytes = s_meter.CreateHistogram<long>("xcall.reply.bytes", "By", "Result payload per call");
    private static readonly Histogram<double> s_marshal = s_meter.CreateHistogram<double>("xcall.marshal.duration", "us", "Time spent marshalling per call");

    internal static bool Enabled => s_calls.Enabled;

    internal static void Record(string contract, string method, string side, long requestBytes, long replyBytes, long marshalNanoseconds)
    {
        var tags = new TagList { { "contract", contract }, { "method", method }, { "side", side } };
        s_calls.Add(1, tags);
        s_requestBytes.Record(requestBytes, tags);
        s_replyBytes.Record(replyBytes, tags);
        s_marshal.Record(marshalNanoseconds / 1000.0, tags);
    }
}
