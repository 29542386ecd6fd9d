namespace XCall.Bench;

/// <summary>Figures over a run's rounds.</summary>
internal static class Stats
{
    /// <summary>The middle value of <paramref name="values"/> (the upper one of an even count); the list is not reordered.</summary>
    public static double Median(IEnumerable<double> values)
    {
        double[] sorted = [.. values.Order()];
        return sorted[sorted.Length / 2];
    }

    /// <summary>The value a fraction <paramref name="q"/> of the way through <paramref name="sorted"/> (sorted ascending).</summary>
    public static T AtQuantile<T>(T[] sorted, double q) => sorted[(int)(q * (sorted.Length - 1))];
}
