using System.Diagnostics.Metrics;

namespace XCall.Transport.Shm.Lending;

/// <summary>
/// The <c>xcall.lent.bytes</c> counter, on a meter named <c>XCall</c> like the call runtime's (a listener that
/// enables instruments by meter name sees both): argument arrays the peer copied straight out of this process's
/// memory instead of through the ring, per endpoint.
/// </summary>
internal static class LendingMetrics
{
    private static readonly Meter s_meter = new("XCall", "1.0");
    private static readonly Counter<long> s_lentBytes = s_meter.CreateCounter<long>("xcall.lent.bytes", "By", "Argument arrays the peer copied straight out of the caller's memory instead of through the transport");

    /// <summary>This process lent the peer <paramref name="bytes"/> of an argument array (tag: the endpoint).</summary>
    public static void RecordLent(string endpoint, long bytes)
    {
        if (s_lentBytes.Enabled)
        {
            s_lentBytes.Add(bytes, new KeyValuePair<string, object?>("endpoint", endpoint));
        }
    }
}
