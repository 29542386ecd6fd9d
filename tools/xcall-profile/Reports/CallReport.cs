using XCall.Profile.Statistics;

namespace XCall.Profile.Reports;

/// <summary>What one collection found: the process, how long it was watched, and a row per method and side.</summary>
internal sealed record CallReport(int ProcessId, TimeSpan Duration, IReadOnlyList<CallSummary> Rows)
{
    /// <summary>Calls of every row (each call counts once per side it was seen on).</summary>
    public long TotalCalls => Rows.Sum(row => row.Calls);
}
