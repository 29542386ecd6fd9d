using System.Diagnostics;
using XCall.Channels;

namespace XCall.Bench;

/// <summary>
/// A select over 8 channels with one ready, then the read it chose, against a plain read of one
/// channel: in both a writer process keeps one channel offered, so each operation finds a writer
/// waiting. ns per operation, and bytes allocated per operation by both processes.
/// </summary>
internal static partial class ChannelSuite
{
    private const int SelectGuards = 8;
    private const int SelectOps = 1_000_000;
    private const int SelectWarmOps = 10_000;
    private const int SelectRounds = 5;

    private enum SelectForm
    {
        /// <summary>ReadAsync on the one channel.</summary>
        PlainRead,

        /// <summary>SelectAsync (arbitrary choice, random start), the ready channel in the middle, then its read.</summary>
        Select,

        /// <summary>PriSelectAsync with the ready channel last (every other guard is looked at first), then its read.</summary>
        PriSelectLast,
    }

    private static void RunSelect(SuiteLog log, List<CallResult> results)
    {
        SelectForm[] forms = [SelectForm.PlainRead, SelectForm.Select, SelectForm.PriSelectLast];
        foreach (SelectForm form in forms)
        {
            MeasureSelect(form, SelectOps / 10);
        }
        var ns = forms.ToDictionary(f => f, _ => new List<double>());
        var bytes = forms.ToDictionary(f => f, _ => new List<double>());
        for (int round = 0; round < SelectRounds; round++)
        {
            foreach (SelectForm form in forms)
            {
                (double n, double b) = MeasureSelect(form, SelectOps);
                ns[form].Add(n);
                bytes[form].Add(b);
            }
        }

        double read = Median(ns[SelectForm.PlainRead]);
        log.Line();
        log.Line($"Select over {SelectGuards} channels, one ready, against a plain read; {SelectOps:N0} operations, median of {SelectRounds} alternating rounds");
        log.Line("| operation | ns per operation | x plain read | bytes allocated per operation |");
        log.Line("|---|---:|---:|---:|");
        foreach ((SelectForm form, string name, string signature) in new[]
        {
            (SelectForm.PlainRead, "ReadAsync, one channel", "read"),
            (SelectForm.Select, $"SelectAsync over {SelectGuards} + ReadAsync", $"select{SelectGuards}"),
            (SelectForm.PriSelectLast, $"PriSelectAsync over {SelectGuards}, ready one last + ReadAsync", $"priselect{SelectGuards}-last"),
        })
        {
            double value = Median(ns[form]);
            double allocated = Median(bytes[form]);
            log.Line($"| {name} | {value:0.0} | {Format(value / read, "0.00")} | {allocated:0.##} |");
            results.Add(new CallResult(signature, "xcall", value, (long)Math.Round(allocated)) { RatioToLocal = value / read });
        }
        double select = Median(ns[SelectForm.Select]);
        log.Budget($"select over {SelectGuards} channels, one ready (+ its read) / plain read", select / read, 2.0, $"{select:0.0} vs {read:0.0} ns");
    }

    /// <summary>One round of <paramref name="ops"/> operations after a short warm-up: ns and bytes allocated per operation.</summary>
    private static (double Ns, double Bytes) MeasureSelect(SelectForm form, int ops)
    {
        var channels = new One2One<int>[SelectGuards];
        for (int i = 0; i < channels.Length; i++)
        {
            channels[i] = new One2One<int>();
        }
        ChannelIn<int>[] inputs = [.. channels.Select(c => c.In)];
        int ready = form == SelectForm.Select ? SelectGuards / 2 : SelectGuards - 1;
        Task writer = Task.Run(() => WriteAllAsync(channels[ready].Out, SelectWarmOps + ops));
        // The reader starts once the writer waits: from then on each read resumes the writer inline and it
        // offers the next value before the read returns, so every operation finds its guard ready. (A reader
        // that started first would be woken inside the writer's write and keep meeting it half-way.)
        var offered = new Alternative(inputs[ready], new Skip());
        while (offered.PriSelect() != 0)
        {
            Thread.Yield();
        }
        Task<(double Ns, double Bytes)> reader = Task.Run(() => form == SelectForm.PlainRead
            ? ReadLoopAsync(inputs[ready], ops)
            : SelectLoopAsync(new Alternative(inputs), inputs, priority: form == SelectForm.PriSelectLast, ops));
        Task.WaitAll(writer, reader);
        return reader.Result;
    }

    private static async Task WriteAllAsync(ChannelOut<int> output, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await output.WriteAsync(i);
        }
    }

    private static async Task<(double Ns, double Bytes)> ReadLoopAsync(ChannelIn<int> input, int ops)
    {
        for (int i = 0; i < SelectWarmOps; i++)
        {
            await input.ReadAsync();
        }
        long allocated = GC.GetTotalAllocatedBytes(precise: true);
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < ops; i++)
        {
            await input.ReadAsync();
        }
        double ns = Stopwatch.GetElapsedTime(start).TotalNanoseconds / ops;
        return (ns, (GC.GetTotalAllocatedBytes(precise: true) - allocated) / (double)ops);
    }

    private static async Task<(double Ns, double Bytes)> SelectLoopAsync(Alternative alternative, ChannelIn<int>[] inputs, bool priority, int ops)
    {
        for (int i = 0; i < SelectWarmOps; i++)
        {
            await inputs[priority ? await alternative.PriSelectAsync() : await alternative.SelectAsync()].ReadAsync();
        }
        long allocated = GC.GetTotalAllocatedBytes(precise: true);
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < ops; i++)
        {
            await inputs[priority ? await alternative.PriSelectAsync() : await alternative.SelectAsync()].ReadAsync();
        }
        double ns = Stopwatch.GetElapsedTime(start).TotalNanoseconds / ops;
        return (ns, (GC.GetTotalAllocatedBytes(precise: true) - allocated) / (double)ops);
    }
}
