using XCall.Profile.Statistics;
using XCall.Profile.Tracing;

namespace XCall.Profile.Tests;

/// <summary>Grouping and summarizing call events.</summary>
public sealed class StatisticsTests
{
    [Fact]
    public void Percentiles_are_exact_for_small_values_and_within_two_percent_for_large_ones()
    {
        var small = new DurationHistogram();
        for (int i = 1; i <= 100; i++)
        {
            small.Record(i);
        }
        Assert.Equal(50, small.Percentile(0.50));
        Assert.Equal(99, small.Percentile(0.99));

        var large = new DurationHistogram();
        for (long i = 1; i <= 10_000; i++)
        {
            large.Record(i * 1_000);
        }
        Assert.InRange(large.Percentile(0.50), 5_000_000 * 0.984, 5_000_000 * 1.016);
        Assert.InRange(large.Percentile(0.99), 9_900_000 * 0.984, 9_900_000 * 1.016);
        Assert.Equal(10_000_000, large.Percentile(1.0));
        Assert.Equal(0, new DurationHistogram().Percentile(0.5));
    }

    [Fact]
    public void Rows_group_by_contract_method_and_side_with_the_most_expensive_first()
    {
        var calls = new CallAggregator();
        for (int i = 0; i < 4; i++)
        {
            calls.Add(Call("Add", "client", request: 8, reply: 4, marshal: 1_000, transport: 10_000, target: 0));
            calls.Add(Call("Add", "server", request: 8, reply: 4, marshal: 500, transport: 0, target: 2_000));
        }
        calls.Add(Call("Echo", "client", request: 12, reply: 12, marshal: 3_000, transport: 100_000, target: 0, failed: true));

        IReadOnlyList<CallSummary> rows = calls.Summarize();

        Assert.Equal([("Echo", "client"), ("Add", "client"), ("Add", "server")], rows.Select(r => (r.Method, r.Side)));
        CallSummary add = rows[1];
        Assert.Equal(4, add.Calls);
        Assert.Equal(0, add.Failed);
        Assert.Equal(1.0, add.MarshalMeanMicroseconds);
        Assert.Equal(1.0, add.MarshalP50Microseconds);
        Assert.Equal(8.0, add.RequestBytesPerCall);
        Assert.Equal(4.0, add.ReplyBytesPerCall);
        Assert.Equal(10.0, add.TransportMeanMicroseconds);
        Assert.Equal(44.0, add.TotalCostMicroseconds);
        Assert.Equal(2.0, rows[2].TargetMeanMicroseconds);
        Assert.Equal(1, rows[0].Failed);
    }

    [Fact]
    public void Summarize_and_reset_starts_the_next_interval_empty()
    {
        var calls = new CallAggregator();
        calls.Add(Call("Add", "client", 8, 4, 1, 1, 0));

        Assert.Single(calls.SummarizeAndReset());
        Assert.Empty(calls.Summarize());
    }

    private static CallRecord Call(string method, string side, long request, long reply, long marshal, long transport, long target, bool failed = false) =>
        new("XCall.Tests.Contracts.IShapes", method, side, "mem://x", request, reply, marshal, transport, target, failed);
}
