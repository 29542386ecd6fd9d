using XCall.Profile.Tracing;

namespace XCall.Profile.Statistics;

/// <summary>
/// Groups calls by contract, method and side. <see cref="Add"/> runs on the event-reading thread while
/// the command's thread summarizes, so both take a private lock (uncontended but for the summary).
/// </summary>
internal sealed class CallAggregator
{
    private readonly object _lock = new();
    private Dictionary<CallKey, CallStatistics> _byKey = [];

    /// <summary>Counts <paramref name="call"/>.</summary>
    public void Add(CallRecord call)
    {
        var key = new CallKey(call.Contract, call.Method, call.Side);
        lock (_lock)
        {
            if (!_byKey.TryGetValue(key, out CallStatistics? statistics))
            {
                statistics = new CallStatistics();
                _byKey.Add(key, statistics);
            }
            statistics.Add(call);
        }
    }

    /// <summary>One row per key, the most expensive (total cost) first.</summary>
    public IReadOnlyList<CallSummary> Summarize()
    {
        lock (_lock)
        {
            return SummarizeUnsynchronized(_byKey);
        }
    }

    /// <summary>Like <see cref="Summarize"/>, then starts over from nothing (for interval views).</summary>
    public IReadOnlyList<CallSummary> SummarizeAndReset()
    {
        Dictionary<CallKey, CallStatistics> taken;
        lock (_lock)
        {
            taken = _byKey;
            _byKey = [];
        }
        return SummarizeUnsynchronized(taken);
    }

    private static CallSummary[] SummarizeUnsynchronized(Dictionary<CallKey, CallStatistics> byKey) =>
        [.. byKey
            .Select(pair => pair.Value.Summarize(pair.Key))
            .OrderByDescending(row => row.TotalCostMicroseconds)
            .ThenBy(row => row.Contract, StringComparer.Ordinal)
            .ThenBy(row => row.Method, StringComparer.Ordinal)
            .ThenBy(row => row.Side, StringComparer.Ordinal)];
}
