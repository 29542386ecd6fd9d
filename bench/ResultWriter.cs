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
        double? Limit(string transport, string signature)
        {
            // tcp polls before it blocks, so its floor is the busy-polling TCP probe, not the one that sleeps in read.
            string mode = transport == "shm" ? "limit-spin" : transport == "tcp" ? "limit-tcp-spin" : "";
            string size = signature == "byte" ? "byte" : "int";
            return signature is not ("int" or "virt" or "data" or "str" or "byte" or "struct") ? null
                : results.FirstOrDefault(r => r.Transport == mode && r.Signature == size)?.NsPerCall;
        }
        return [.. results.Select(r => r with
        {
            RatioToLocal = local is > 0 ? r.NsPerCall / local : null,
            RatioToLimit = IsPaired(r.Signature) ? r.RatioToLimit : Limit(r.Transport, r.Signature) is double l and > 0 ? r.NsPerCall / l : null,
        })];
    }

    /// <summary>The summary rows of the paired bursts (SideBySide.Rows): their ratio is already per round.</summary>
    private static bool IsPaired(string signature) => signature is "int-paired" or "byte-paired" or "int-paired-mpi";

    /// <summary>Columns of bare ns: the machine-limit probes and Open MPI's ping-pong (C programs, no allocation figure).</summary>
    private static bool IsProbe(string transport) => transport.StartsWith("limit", StringComparison.Ordinal) || transport == "peer-mpi";

    private static readonly string[] s_extraSignatures = ["byte[1MiB]", "span[1MiB]", "lent[1MiB]", "oneway-batch", "async-pipelined"];

    public static string Table(IReadOnlyList<CallResult> results, string machine)
    {
        string[] signatures = [.. BenchOptions.AllSignatures.Concat(s_extraSignatures).Where(s => results.Any(r => r.Signature == s))];
        string[] transports = [.. results.Where(r => signatures.Contains(r.Signature)).Select(r => r.Transport).Distinct()];
        var sb = new StringBuilder();
        sb.AppendLine($"| signature | {string.Join(" | ", transports.Select(t => IsProbe(t) ? $"{t} ns" : $"{t} ns (x loc{(t is "shm" or "tcp" ? ", x limit" : "")}) [B/call]"))} |");
        sb.AppendLine($"|---|{string.Concat(transports.Select(_ => "---:|"))}");
        foreach (string s in signatures)
        {
            sb.Append($"| {s} |");
            foreach (string t in transports)
            {
                CallResult? r = results.FirstOrDefault(x => x.Signature == s && x.Transport == t);
                sb.Append(r is null ? " |" : " " + Cell(r) + " |");
            }
            sb.AppendLine();
        }
        sb.AppendLine();
        foreach (CallResult r in results.Where(r => s_extraSignatures.Contains(r.Signature)))
        {
            sb.AppendLine(r.Signature.EndsWith("[1MiB]", StringComparison.Ordinal)
                ? $"- {r.Transport} {r.Signature}: {(1 << 20) / r.NsPerCall:0.00} GB/s ({r.NsPerCall / 1000:0.0} µs per call){FloorNote(r)}"
                : $"- {r.Transport} {r.Signature}: {1e9 / r.NsPerCall:N0} calls/s");
        }
        CallResult[] serializers = [.. results.Where(r => r.Signature == GraphSerializerBenchmarks.Signature)];
        if (serializers.FirstOrDefault(r => r.Transport == "xcall") is { } xcall)
        {
            string others = string.Join(", ", serializers.Where(r => r != xcall).Select(r => $"{r.Transport} {r.NsPerCall / 1000:0.0} µs ({r.NsPerCall / xcall.NsPerCall:0.0}x xcall, {r.AllocatedBytesPerCall} B)"));
            sb.AppendLine($"- 1,000-object graph, write + read: xcall {xcall.NsPerCall / 1000:0.0} µs ({xcall.AllocatedBytesPerCall} B); {others}");
        }
        foreach (CallResult r in results.Where(r => r.Signature == "telemetry-check"))
        {
            sb.AppendLine($"- telemetry off: the per-call enabled check costs {r.NsPerCall:0.00} ns");
        }
        foreach (CallResult r in results.Where(r => r.Signature == "idle"))
        {
            sb.AppendLine($"- {r.Transport} idle connection: {r.NsPerCall:0.00} % of one core ({r.Note})");
        }
        foreach (CallResult r in results.Where(r => IsPaired(r.Signature)))
        {
            sb.AppendLine($"- {r.Note}");
        }
        foreach (CallResult r in results.Where(r => r.Note is not null && r.Signature is "int" or "byte"))
        {
            sb.AppendLine($"- {r.Transport} {(r.Signature == "int" ? "4 B" : "1000 B")}: {r.NsPerCall:0} ns median ({r.Note})");
        }
        sb.AppendLine();
        sb.AppendLine($"Machine: {machine}");
        return sb.ToString();
    }

    /// <summary>What a 1 MiB floor or peer row measured (C programs, median of 5 batches).</summary>
    private static string FloorNote(CallResult r) => r.Transport switch
    {
        "peer-mpi" => $" (Open MPI ping-pong of 1 MiB each way: half its round trip, so the GB/s are Open MPI's own bandwidth figure; {r.Note})",
        "limit-copy" => " (C probe: copied into shared memory and out into the other process's buffer, a flag back: the floor of two copies)",
        "limit-cma" => " (C probe: one process_vm_readv from the caller's buffer into the other's, a flag back: the one-copy floor Open MPI uses)",
        _ => "",
    };

    private static string Cell(CallResult r)
    {
        if (IsProbe(r.Transport))
        {
            return r.NsPerCall.ToString("0", s_inv);
        }
        string ns = r.NsPerCall >= 100 ? r.NsPerCall.ToString("0", s_inv) : r.NsPerCall.ToString("0.00", s_inv);
        string ratios = (r.RatioToLocal ?? double.NaN).ToString("0.0", s_inv) + "x"
            + (r.RatioToLimit is double l ? ", " + l.ToString("0.00", s_inv) + "x" : "");
        return $"{ns} ({ratios}) [{r.AllocatedBytesPerCall?.ToString(s_inv) ?? "?"}]";
    }

    public static void WriteFiles(string directory, IReadOnlyList<CallResult> results, string machine)
    {
        Directory.CreateDirectory(directory);
        WriteJson(Path.Combine(directory, "calls.json"), results);
        File.WriteAllText(Path.Combine(directory, "calls.md"), Table(results, machine));
        WriteCsv(Path.Combine(directory, "calls.csv"), results);
        ChartWriter.Write(Path.Combine(directory, "calls.png"), results);
    }

    /// <summary>The rows as calls.json: one object per row, the schema every suite shares.</summary>
    public static void WriteJson(string path, IReadOnlyList<CallResult> results)
    {
        using FileStream json = File.Create(path);
        using var w = new Utf8JsonWriter(json, new JsonWriterOptions { Indented = true });
        w.WriteStartArray();
        foreach (CallResult r in results.Where(r => r.Signature != "idle"))
        {
            w.WriteStartObject();
            w.WriteString("signature", r.Signature);
            w.WriteString("transport", r.Transport);
            w.WriteNumber("ns_per_call", Math.Round(r.NsPerCall, 3));
            WriteNumberOrNull(w, "ratio_to_local", r.RatioToLocal);
            WriteNumberOrNull(w, "ratio_to_limit", r.RatioToLimit);
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

    /// <summary>The rows as calls.csv, the columns of calls.json.</summary>
    public static void WriteCsv(string path, IReadOnlyList<CallResult> results)
    {
        var csv = new StringBuilder("signature,transport,ns_per_call,ratio_to_local,ratio_to_limit,allocated_bytes_per_call\n");
        foreach (CallResult r in results.Where(r => r.Signature != "idle"))
        {
            csv.Append(s_inv, $"{r.Signature},{r.Transport},{r.NsPerCall:0.###},{r.RatioToLocal:0.###},{r.RatioToLimit:0.###},{r.AllocatedBytesPerCall}\n");
        }
        File.WriteAllText(path, csv.ToString());
    }

    private static void WriteNumberOrNull(Utf8JsonWriter w, string name, double? value)
    {
        if (value is { } v)
        {
            w.WriteNumber(name, Math.Round(v, 3));
        }
        else
        {
            w.WriteNull(name);
        }
    }
}
