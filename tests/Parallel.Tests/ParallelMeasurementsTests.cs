namespace XCall.Parallel.Tests;

/// <summary>What the host's answers add to a contract's measurement: the mean over every call, and the least batch mean.</summary>
public sealed class ParallelMeasurementsTests
{
    [Fact]
    public void The_least_batch_mean_counts_only_batches_of_enough_calls_and_is_null_before_one()
    {
        var measurements = new ParallelMeasurements();
        Assert.Null(measurements.Measure("IGrain").LeastBatchNanoseconds); // nothing measured yet

        measurements.AddHostTime(["IGrain"], [ParallelMeasurements.LeastBatchCalls - 1], [10]);
        GrainMeasurement few = measurements.Measure("IGrain");
        Assert.Null(few.LeastBatchNanoseconds); // one batch, too few calls to count
        Assert.Equal(ParallelMeasurements.LeastBatchCalls - 1, few.Calls);

        measurements.AddHostTime(["IGrain", "IOther"], [100, 100], [20_000, 5_000]);
        measurements.AddHostTime(["IGrain"], [200], [60_000]);
        GrainMeasurement grain = measurements.Measure("IGrain");
        Assert.Equal(200.0, grain.LeastBatchNanoseconds); // 20,000 / 100, not 60,000 / 200
        Assert.Equal(50.0, measurements.Measure("IOther").LeastBatchNanoseconds);
        Assert.Equal(ParallelMeasurements.LeastBatchCalls - 1 + 300, grain.Calls);
    }
}
