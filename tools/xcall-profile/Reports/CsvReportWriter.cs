using System.Globalization;
using System.Text;
using XCall.Profile.Statistics;

namespace XCall.Profile.Reports;

/// <summary>Writes rows as RFC 4180 CSV: a header of <see cref="ReportColumn.Name"/>s, then one line per row.</summary>
internal static class CsvReportWriter
{
    /// <summary>Appends the CSV of <paramref name="rows"/> to <paramref name="output"/>.</summary>
    public static void Write(IReadOnlyList<CallSummary> rows, StringBuilder output)
    {
        output.AppendJoin(',', ReportColumn.All.Select(column => column.Name)).Append('\n');
        foreach (CallSummary row in rows)
        {
            output.AppendJoin(',', ReportColumn.All.Select(column => Field(column.Value(row)))).Append('\n');
        }
    }

    private static string Field(object value) => value switch
    {
        double measure => Math.Round(measure, ReportColumn.MachineDecimals).ToString("R", CultureInfo.InvariantCulture),
        long count => count.ToString(CultureInfo.InvariantCulture),
        string text when text.AsSpan().IndexOfAny(",\"\n\r") >= 0 => "\"" + text.Replace("\"", "\"\"", StringComparison.Ordinal) + "\"",
        _ => value.ToString() ?? "",
    };
}
