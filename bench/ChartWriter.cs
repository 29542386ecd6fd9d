using ScottPlot;

namespace XCall.Bench;

/// <summary>Draws calls.png: ns per call, log scale, one group of bars per signature, one bar per transport.</summary>
internal static class ChartWriter
{
    public static void Write(string path, IReadOnlyList<CallResult> results)
    {
        string[] signatures = [.. BenchOptions.AllSignatures.Where(s => results.Any(r => r.Signature == s))];
        string[] transports = [.. results.Where(r => signatures.Contains(r.Signature)).Select(r => r.Transport).Where(t => !t.StartsWith("limit", StringComparison.Ordinal)).Distinct()];
        var plot = new Plot();
        var palette = new ScottPlot.Palettes.Category10();
        double width = 0.8 / Math.Max(1, transports.Length);
        for (int t = 0; t < transports.Length; t++)
        {
            var bars = new List<Bar>();
            for (int s = 0; s < signatures.Length; s++)
            {
                CallResult? r = results.FirstOrDefault(x => x.Signature == signatures[s] && x.Transport == transports[t]);
                if (r is null || r.NsPerCall <= 0)
                {
                    continue;
                }
                // Log scale: bars from 10^-1 ns, labelled with the real value.
                bars.Add(new Bar
                {
                    Position = s - 0.4 + (width * (t + 0.5)),
                    ValueBase = -1,
                    Value = Math.Log10(r.NsPerCall),
                    Size = width * 0.95,
                    FillColor = palette.GetColor(t),
                });
            }
            var series = plot.Add.Bars(bars);
            series.LegendText = transports[t];
        }
        plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual(
            [.. signatures.Select((s, i) => (double)i)], signatures);
        var ticks = new ScottPlot.TickGenerators.NumericManual();
        for (int e = -1; e <= 7; e++)
        {
            ticks.AddMajor(e, e switch { < 3 => $"{Math.Pow(10, e)} ns", < 6 => $"{Math.Pow(10, e - 3)} µs", _ => $"{Math.Pow(10, e - 6)} ms" });
        }
        plot.Axes.Left.TickGenerator = ticks;
        plot.Axes.SetLimitsY(-1, Math.Ceiling(results.Where(r => r.NsPerCall > 0).Select(r => Math.Log10(r.NsPerCall)).DefaultIfEmpty(3).Max()) + 0.3);
        plot.Axes.Margins(bottom: 0);
        plot.Title("XCall call cost per signature and transport (ns per call, log scale)");
        plot.ShowLegend(Alignment.UpperLeft);
        plot.SavePng(path, 1200, 600);
    }
}
