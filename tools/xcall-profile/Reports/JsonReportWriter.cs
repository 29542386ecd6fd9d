using System.Text.Encodings.Web;
using System.Text.Json;
using XCall.Profile.Statistics;

namespace XCall.Profile.Reports;

/// <summary>
/// Writes a report as one JSON object: <c>pid</c>, <c>durationSeconds</c>, <c>totalCalls</c> and a
/// <c>methods</c> array with one object per row, keyed by <see cref="ReportColumn.Name"/>.
/// </summary>
internal static class JsonReportWriter
{
    private static readonly JsonWriterOptions s_options = new()
    {
        Indented = true,
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
    };

    /// <summary>Writes <paramref name="report"/> to <paramref name="output"/>.</summary>
    public static void Write(CallReport report, Stream output)
    {
        using var json = new Utf8JsonWriter(output, s_options);
        json.WriteStartObject();
        json.WriteNumber("pid", report.ProcessId);
        json.WriteNumber("durationSeconds", Math.Round(report.Duration.TotalSeconds, ReportColumn.MachineDecimals));
        json.WriteNumber("totalCalls", report.TotalCalls);
        json.WriteStartArray("methods");
        foreach (CallSummary row in report.Rows)
        {
            json.WriteStartObject();
            foreach (ReportColumn column in ReportColumn.All)
            {
                switch (column.Value(row))
                {
                    case string text:
                        json.WriteString(column.Name, text);
                        break;
                    case long count:
                        json.WriteNumber(column.Name, count);
                        break;
                    case double measure:
                        json.WriteNumber(column.Name, Math.Round(measure, ReportColumn.MachineDecimals));
                        break;
                }
            }
            json.WriteEndObject();
        }
        json.WriteEndArray();
        json.WriteEndObject();
        json.Flush();
        output.WriteByte((byte)'\n');
    }
}
