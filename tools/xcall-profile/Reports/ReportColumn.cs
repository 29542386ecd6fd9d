using System.Globalization;
using XCall.Profile.Statistics;

namespace XCall.Profile.Reports;

/// <summary>
/// One column of every report format: <see cref="Name"/> keys JSON and heads CSV, <see cref="Header"/>
/// heads the table. A value is a string, a count (<see cref="long"/>) or a measure (<see cref="double"/>).
/// </summary>
internal sealed record ReportColumn(string Name, string Header, Func<CallSummary, object> Value, int TableDecimals = 0)
{
    /// <summary>The columns, in report order; every format prints exactly these.</summary>
    public static IReadOnlyList<ReportColumn> All { get; } =
    [
        new("contract", "Contract", row => row.Contract),
        new("method", "Method", row => row.Method),
        new("side", "Side", row => row.Side),
        new("calls", "Calls", row => row.Calls),
        new("failed", "Failed", row => row.Failed),
        new("marshalMeanUs", "Marshal µs", row => row.MarshalMeanMicroseconds, 2),
        new("marshalP50Us", "p50 µs", row => row.MarshalP50Microseconds, 2),
        new("marshalP99Us", "p99 µs", row => row.MarshalP99Microseconds, 2),
        new("requestBytesPerCall", "Req B", row => row.RequestBytesPerCall, 1),
        new("replyBytesPerCall", "Reply B", row => row.ReplyBytesPerCall, 1),
        new("transportMeanUs", "Transport µs", row => row.TransportMeanMicroseconds, 2),
        new("targetMeanUs", "Target µs", row => row.TargetMeanMicroseconds, 2),
        new("totalCostUs", "Total µs", row => row.TotalCostMicroseconds, 1),
    ];

    /// <summary>Measures are rounded to this many decimals in JSON and CSV (nanosecond resolution for µs).</summary>
    public const int MachineDecimals = 3;

    /// <summary>The value as the table shows it.</summary>
    public string TableText(CallSummary row) => Value(row) switch
    {
        double measure => measure.ToString("N" + TableDecimals.ToString(CultureInfo.InvariantCulture), CultureInfo.InvariantCulture),
        long count => count.ToString("N0", CultureInfo.InvariantCulture),
        object other => other.ToString() ?? "",
    };

    /// <summary>True when the table right-aligns the column (numbers).</summary>
    public bool IsNumeric(CallSummary row) => Value(row) is double or long;
}
