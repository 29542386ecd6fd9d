using System.Globalization;
using System.Text;

namespace XCall.Profile.Reports;

/// <summary>Prints a <see cref="CallReport"/> in the chosen <see cref="ReportFormat"/>.</summary>
internal static class ReportWriter
{
    /// <summary>Parses a <c>--format</c> value: <c>table</c>, <c>json</c> or <c>csv</c>.</summary>
    public static bool TryParseFormat(string text, out ReportFormat format)
    {
        format = text.ToLowerInvariant() switch
        {
            "table" => ReportFormat.Table,
            "json" => ReportFormat.Json,
            "csv" => ReportFormat.Csv,
            _ => (ReportFormat)(-1),
        };
        return Enum.IsDefined(format);
    }

    /// <summary>Writes <paramref name="report"/> to <paramref name="output"/>.</summary>
    public static void Write(CallReport report, ReportFormat format, Stream output)
    {
        if (format == ReportFormat.Json)
        {
            JsonReportWriter.Write(report, output);
            return;
        }
        var text = new StringBuilder();
        if (format == ReportFormat.Csv)
        {
            CsvReportWriter.Write(report.Rows, text);
        }
        else
        {
            text.Append(CultureInfo.InvariantCulture,
                $"XCall calls of process {report.ProcessId} in {DurationText.Format(report.Duration)}: {report.TotalCalls:N0} (sorted by total cost)\n\n");
            TableReportWriter.Write(report.Rows, text);
        }
        output.Write(Encoding.UTF8.GetBytes(text.ToString()));
    }
}
