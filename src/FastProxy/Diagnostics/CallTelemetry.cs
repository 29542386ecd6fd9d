using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace XCall.Diagnostics;

/// <summary>Where the call path reports to the event source and the meter; one cheap check when nobody listens.</summary>
internal static class CallTelemetry
{
    public static bool Enabled
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => XCallEventSource.Log.IsEnabled() && XCallEventSource.Log.CallsEnabled || XCallMetrics.Enabled;
    }

    /// <summary>A timestamp when telemetry is on, else 0 (which turns recording off for that call).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static long Start() => Enabled ? Stopwatch.GetTimestamp() : 0;

    public static long Nanoseconds(long fromTimestamp, long toTimestamp) =>
        toTimestamp <= fromTimestamp ? 0 : (long)((toTimestamp - fromTimestamp) * (1_000_000_000.0 / Stopwatch.Frequency));

    public static void Record(
        string contract, string method, string side, string endpoint,
        long requestBytes, long replyBytes, long marshalNs, long transportNs, long targetNs, bool failed)
    {
        if (XCallEventSource.Log.CallsEnabled)
        {
            XCallEventSource.Log.CallCompleted(contract, method, side, endpoint, requestBytes, replyBytes, marshalNs, transportNs, targetNs, failed);
        }
        if (XCallMetrics.Enabled)
        {
            XCallMetrics.Record(contract, method, side, requestBytes, replyBytes, marshalNs);
        }
    }
}
