using System.Globalization;
using System.Numerics;
using System.Text;

namespace XCall.Bench;

/// <summary>
/// Call latencies in logarithmic buckets (64 per power of two above 128 ns, so a percentile is within 1.6 % of
/// the true value): cheap enough to record every call of a run, small enough to send from a child process as
/// one line, and exact to merge (bucket counts add up).
/// </summary>
internal sealed class LatencyHistogram
{
    private const int Exact = 128; // values below this have a bucket each
    private const int SubBuckets = 64;
    private const int MaxExponent = 42; // 2^42 ns: over an hour

    private readonly long[] _counts = new long[Exact + (MaxExponent - 6) * SubBuckets];

    /// <summary>The calls recorded.</summary>
    public long Count { get; private set; }

    /// <summary>Records one call of <paramref name="ns"/> nanoseconds.</summary>
    public void Record(long ns)
    {
        _counts[Index(ns)]++;
        Count++;
    }

    /// <summary>Adds <paramref name="other"/>'s calls.</summary>
    public void Add(LatencyHistogram other)
    {
        for (int i = 0; i < _counts.Length; i++)
        {
            _counts[i] += other._counts[i];
        }
        Count += other.Count;
    }

    /// <summary>The latency below which a fraction <paramref name="q"/> of the calls fall (the bucket's middle), ns.</summary>
    public double Percentile(double q)
    {
        if (Count == 0)
        {
            return double.NaN;
        }
        long rank = Math.Max(1, (long)Math.Ceiling(q * Count));
        long seen = 0;
        for (int i = 0; i < _counts.Length; i++)
        {
            seen += _counts[i];
            if (seen >= rank)
            {
                return Middle(i);
            }
        }
        return Middle(_counts.Length - 1);
    }

    /// <summary>The non-empty buckets as <c>index:count</c> pairs, comma-separated (what <see cref="Parse"/> reads).</summary>
    public string Serialize()
    {
        var text = new StringBuilder();
        for (int i = 0; i < _counts.Length; i++)
        {
            if (_counts[i] != 0)
            {
                text.Append(CultureInfo.InvariantCulture, $"{(text.Length == 0 ? "" : ",")}{i}:{_counts[i]}");
            }
        }
        return text.Length == 0 ? "-" : text.ToString();
    }

    /// <summary>Reads what <see cref="Serialize"/> wrote.</summary>
    public static LatencyHistogram Parse(string text)
    {
        var histogram = new LatencyHistogram();
        if (text == "-")
        {
            return histogram;
        }
        foreach (string pair in text.Split(','))
        {
            int colon = pair.IndexOf(':', StringComparison.Ordinal);
            long count = long.Parse(pair.AsSpan(colon + 1), CultureInfo.InvariantCulture);
            histogram._counts[int.Parse(pair.AsSpan(0, colon), CultureInfo.InvariantCulture)] += count;
            histogram.Count += count;
        }
        return histogram;
    }

    private static int Index(long ns)
    {
        if (ns < Exact)
        {
            return (int)Math.Max(ns, 0);
        }
        int exponent = Math.Min(63 - BitOperations.LeadingZeroCount((ulong)ns), MaxExponent - 1); // >= 7
        int mantissa = (int)((ns >> (exponent - 6)) & (SubBuckets - 1));
        return Exact + ((exponent - 7) * SubBuckets) + mantissa;
    }

    private static double Middle(int index)
    {
        if (index < Exact)
        {
            return index;
        }
        int exponent = ((index - Exact) / SubBuckets) + 7;
        int mantissa = (index - Exact) % SubBuckets;
        double width = Math.Pow(2, exponent - 6);
        return ((SubBuckets + mantissa) * width) + (width / 2);
    }
}
