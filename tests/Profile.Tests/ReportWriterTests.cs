using System.Text;
using System.Text.Json;
using XCall.Profile.Reports;
using XCall.Profile.Statistics;

namespace XCall.Profile.Tests;

/// <summary>The table, JSON and CSV reports.</summary>
public sealed class ReportWriterTests
{
    private static readonly CallReport s_report = new(
        42,
        TimeSpan.FromSeconds(5),
        [
            new CallSummary("XCall.Tests.Contracts.IShapes", "Echo", "client", 100, 1, 1.5, 1.25, 9.75, 12, 12, 20.125, 0, 2162.5),
            new CallSummary("XCall.Tests.Contracts.IShapes", "Add", "server", 200, 0, 0.5, 0.5, 1, 8, 4, 0, 0.25, 150),
        ]);

    [Fact]
    public void Json_has_one_object_per_row_with_every_column()
    {
        using JsonDocument json = JsonDocument.Parse(Write(ReportFormat.Json));

        Assert.Equal(42, json.RootElement.GetProperty("pid").GetInt32());
        Assert.Equal(5.0, json.RootElement.GetProperty("durationSeconds").GetDouble());
        Assert.Equal(300, json.RootElement.GetProperty("totalCalls").GetInt64());
        JsonElement[] rows = [.. json.RootElement.GetProperty("methods").EnumerateArray()];
        Assert.Equal(2, rows.Length);
        Assert.Equal(ReportColumn.All.Select(c => c.Name), rows[0].EnumerateObject().Select(p => p.Name));
        Assert.Equal("Echo", rows[0].GetProperty("method").GetString());
        Assert.Equal(9.75, rows[0].GetProperty("marshalP99Us").GetDouble());
        Assert.Equal(200, rows[1].GetProperty("calls").GetInt64());
    }

    [Fact]
    public void Csv_has_a_header_of_the_same_columns_and_one_line_per_row()
    {
        string[] lines = Write(ReportFormat.Csv).TrimEnd('\n').Split('\n');

        Assert.Equal(3, lines.Length);
        Assert.Equal(string.Join(',', ReportColumn.All.Select(c => c.Name)), lines[0]);
        Assert.Equal("XCall.Tests.Contracts.IShapes,Echo,client,100,1,1.5,1.25,9.75,12,12,20.125,0,2162.5", lines[1]);
    }

    [Fact]
    public void Table_aligns_every_column_under_its_header()
    {
        string[] lines = Write(ReportFormat.Table).TrimEnd('\n').Split('\n');

        Assert.StartsWith("XCall calls of process 42 in 5s: 300", lines[0]);
        string header = lines[2];
        Assert.All(ReportColumn.All, column => Assert.Contains(column.Header, header));
        Assert.Equal(header.Length, lines[4].Length);
        Assert.Contains("2,162.5", lines[4]);
        Assert.EndsWith("150.0", lines[5]);
    }

    private static string Write(ReportFormat format)
    {
        using var output = new MemoryStream();
        ReportWriter.Write(s_report, format, output);
        return Encoding.UTF8.GetString(output.ToArray());
    }
}
