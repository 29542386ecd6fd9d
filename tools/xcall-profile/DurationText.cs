using System.Globalization;

namespace XCall.Profile;

/// <summary>Durations as the command line writes them: <c>500ms</c>, <c>10s</c>, <c>1m</c>, <c>1.5s</c>.</summary>
internal static class DurationText
{
    /// <summary>Parses a number followed by <c>ms</c>, <c>s</c> or <c>m</c> (a bare number means seconds).</summary>
    /// <returns>False when <paramref name="text"/> is not such a duration or is not positive.</returns>
    public static bool TryParse(string text, out TimeSpan duration)
    {
        duration = default;
        string number = text.Trim();
        double scale = 1000;
        if (number.EndsWith("ms", StringComparison.OrdinalIgnoreCase))
        {
            number = number[..^2];
            scale = 1;
        }
        else if (number.EndsWith('s') || number.EndsWith('S'))
        {
            number = number[..^1];
        }
        else if (number.EndsWith('m') || number.EndsWith('M'))
        {
            number = number[..^1];
            scale = 60_000;
        }
        if (!double.TryParse(number, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out double value)
            || value <= 0 || value * scale > TimeSpan.FromDays(1).TotalMilliseconds)
        {
            return false;
        }
        duration = TimeSpan.FromMilliseconds(value * scale);
        return true;
    }

    /// <summary>Writes <paramref name="duration"/> in the largest unit that keeps it short: <c>1m</c>, <c>10s</c>, <c>2.5s</c>, <c>500ms</c>.</summary>
    public static string Format(TimeSpan duration)
    {
        if (duration.Ticks % TimeSpan.TicksPerMinute == 0 && duration >= TimeSpan.FromMinutes(1))
        {
            return string.Create(CultureInfo.InvariantCulture, $"{(long)duration.TotalMinutes}m");
        }
        if (duration >= TimeSpan.FromSeconds(1))
        {
            return string.Create(CultureInfo.InvariantCulture, $"{Math.Round(duration.TotalSeconds, 1)}s");
        }
        return string.Create(CultureInfo.InvariantCulture, $"{Math.Round(duration.TotalMilliseconds)}ms");
    }
}
