using System.Text;
using XCall.Profile.Statistics;

namespace XCall.Profile.Reports;

/// <summary>Writes rows as an aligned text table: text left-aligned, numbers right-aligned.</summary>
internal static class TableReportWriter
{
    /// <summary>Appends the table of <paramref name="rows"/> (header, rule, rows) to <paramref name="output"/>.</summary>
    public static void Write(IReadOnlyList<CallSummary> rows, StringBuilder output)
    {
        IReadOnlyList<ReportColumn> columns = ReportColumn.All;
        string[][] cells = [.. rows.Select(row => columns.Select(column => column.TableText(row)).ToArray())];
        int[] widths = new int[columns.Count];
        bool[] numeric = new bool[columns.Count];
        for (int c = 0; c < columns.Count; c++)
        {
            widths[c] = Math.Max(columns[c].Header.Length, cells.Select(line => line[c].Length).DefaultIfEmpty(0).Max());
            numeric[c] = rows.Count > 0 && columns[c].IsNumeric(rows[0]);
        }
        AppendLine(output, [.. columns.Select(column => column.Header)], widths, numeric);
        AppendLine(output, [.. widths.Select(width => new string('-', width))], widths, numeric);
        foreach (string[] line in cells)
        {
            AppendLine(output, line, widths, numeric);
        }
    }

    private static void AppendLine(StringBuilder output, string[] cells, int[] widths, bool[] numeric)
    {
        for (int c = 0; c < cells.Length; c++)
        {
            if (c > 0)
            {
                output.Append("  ");
            }
            bool last = c == cells.Length - 1;
            output.Append(numeric[c] ? cells[c].PadLeft(widths[c]) : last ? cells[c] : cells[c].PadRight(widths[c]));
        }
        output.Append('\n');
    }
}
