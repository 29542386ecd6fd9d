using System.Globalization;
using System.Text;
using System.Text.Json;

namespace XCall.Bench;

/// <summary>Writes the results as a console table, calls.json, calls.md and calls.csv.</summary>
internal static class ResultWriter
{
    private static readonly CultureInfo s_inv = CultureInfo.InvariantCulture;

    public static IReadOnlyList<CallResult> WithRatios(IReadOnlyList<CallResult> results)
    {
        double? local = results.FirstOrDefault(r => r is { Signature: "loc", Transport: "direct" })?.NsPerCall;
        return [.. results.Select(r => r with { RatioToLocal = local is > 0 ? r.NsPerCall / local : null })];
    }

    public static string Table(IReadOnlyList<CallResult> results, string machine)
    {
        string[] transports = [.. results.Select(r => r.Transport).Distinct()];
        string[] signatures = [.. BenchOptions.AllSignatures.Where(s => results.Any(r => r.Signature == s))];
        var sb = new StringBuilder();
        sb.AppendLine($"| signature | {string.Join(" | ", transports.Select(t => $"{t} ns (x loc) [B/call]"))} |");
        sb.AppendLine($"|---|{string.Concat(transports.Select(_ => "---:|"))}");
        foreach (string s in signatures)
        {
            sb.Append($"| {s} |");
            foreach (string t in transports)
            {
                CallResult? r = results.FirstOrDefault(x => x.Signature == s && x.Transport == t);
                sb.Append(r is null ? " |" : $" {r.NsPerCall.ToString("0.00", s_inv)} ({(r.RatioToLocal ?? double.NaN).ToString("0.00", s_inv)}x) [{r.AllocatedBytesPerCall?.ToString(s_inv) ?? "?"}] |");
            }
            sb.AppendLine();
        }
        sb.AppendLine();
        sb.AppendLine($"Machine: {machine}");
        return sb.ToString();
    }

    public static void WriteFiles(string directory, IReadOnlyList<CallResult> results, string machine)
    {
        Directory.CreateDirectory(directory);
        using (FileStream json = File.Create(Path.Combine(directory, "calls.json")))
        using (var w = new Utf8JsonWriter(json, new JsonWriterOptions { Indented = true }))
        {
            w.WriteStartArray();
            foreach (CallResult r in results)
            {
                w.WriteStartObject();
                w.WriteString("signature", r.Signature);
                w.WriteString("transport", r.Transport);
                w.WriteNumber("ns_per_call", Math.Round(r.NsPerCall, 3));
                if (r.RatioToLocal is { } ratio)
                {
                    w.WriteNumber("ratio_to_local", Math.Round(ratio, 3));
                }
                else
                {
                    w.WriteNull("ratio_to_local");
                }
                w.WriteNull("ratio_to_limit");
                if (r.AllocatedBytesPerCall is { } bytes)
                {
                    w.WriteNumber("allocated_bytes_per_call", bytes);
                }
                else
                {
                    w.WriteNull("allocated_bytes_per_call");
                }
                w.WriteEndObject();
            }
            w.WriteEndArray();
        }
        File.WriteAllText(Path.Combine(directory, "calls.md"), Table(results, machine));
        var csv = new StringBuilder("signature,transport,ns_per_call,ratio_to_local,ratio_to_limit,allocated_bytes_per_call\n");
        foreach (CallResult r in results)
        {
            csv.Append(s_inv, $"{r.Signature},{r.Transport},{r.NsPerCall:0.###},{r.RatioToLocal:0.###},,{r.AllocatedBytesPerCall}\n");
        }
        File.WriteAllText(Path.Combine(directory, "calls.csv"), csv.ToString());
    }
}
