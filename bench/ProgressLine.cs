using BenchmarkDotNet.EventProcessors;
using BenchmarkDotNet.Running;

namespace XCall.Bench;

/// <summary>Prints one progress line per benchmark case to standard error: which row, how far along.</summary>
internal sealed class ProgressLine : EventProcessor
{
    private int _done;
    private int _total;

    public override void OnStartRunStage() { }

    public override void OnStartRunBenchmarksInType(Type type, IReadOnlyList<BenchmarkCase> benchmarks) => _total += benchmarks.Count;

    public override void OnStartRunBenchmark(BenchmarkCase benchmarkCase)
    {
        _done++;
        string transport = benchmarkCase.Parameters.Items.FirstOrDefault()?.Value?.ToString() ?? "direct";
        Console.Error.WriteLine($"[xcall-bench] {_done}/{_total}: {benchmarkCase.Descriptor.WorkloadMethodDisplayInfo.Trim('\'')} on {transport}");
    }
}
