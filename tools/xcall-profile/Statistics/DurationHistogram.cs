using System.Numerics;

namespace XCall.Profile.Statistics;

/// <summary>
/// Counts nanosecond durations in log-linear buckets: exact below 128 ns, then 64 buckets per power of
/// two, so a percentile is within 1.6 % of the true value whatever the range, in constant memory.
/// </summary>
internal sealed class DurationHistogram
{
    private const int SubBucketBits = 6;
    private const int SubBuckets = 1 << SubBucketBits;
    private const int ExactLimit = 2 * SubBuckets;
    private const int FirstExponent = SubBucketBits + 1;
    private const int BucketCount = ExactLimit + ((63 - FirstExponent) * SubBuckets);

    private readonly long[] _counts = new long[BucketCount];
    private long _min = long.MaxValue;
    private long _max = long.MinValue;

    /// <summary>How many values were recorded.</summary>
    public long Count { get; private set; }

    /// <summary>Records one duration; negative values count as 0.</summary>
    public void Record(long nanoseconds)
    {
        long value = Math.Max(nanoseconds, 0);
        _counts[BucketOf(value)]++;
        _min = Math.Min(_min, value);
        _max = Math.Max(_max, value);
        Count++;
    }

    /// <summary>The value below which <paramref name="fraction"/> (0..1) of the recorded values lie; 0 when empty.</summary>
    public double Percentile(double fraction)
    {
        if (Count == 0)
        {
            return 0;
        }
        long rank = Math.Max(1, (long)Math.Ceiling(fraction * Count));
        long seen = 0;
        for (int bucket = 0; bucket < BucketCount; bucket++)
        {
            seen += _counts[bucket];
            if (seen >= rank)
            {
                return Math.Clamp(MidpointOf(bucket), _min, _max);
            }
        }
        return _max;
    }

    private static int BucketOf(long value)
    {
        if (value < ExactLimit)
        {
            return (int)value;
        }
        int exponent = BitOperations.Log2((ulong)value);
        int subBucket = (int)(value >> (exponent - SubBucketBits)) & (SubBuckets - 1);
        return ExactLimit + ((exponent - FirstExponent) * SubBuckets) + subBucket;
    }

    private static double MidpointOf(int bucket)
    {
        if (bucket < ExactLimit)
        {
            return bucket;
        }
        int exponent = FirstExponent + ((bucket - ExactLimit) / SubBuckets);
        int subBucket = (bucket - ExactLimit) % SubBuckets;
        double width = Math.Pow(2, exponent - SubBucketBits);
        return ((SubBuckets + subBucket) * width) + (width / 2);
    }
}
