namespace XCall.Profile.Tests;

/// <summary>Durations on the command line.</summary>
public sealed class DurationTextTests
{
    [Theory]
    [InlineData("10s", 10_000)]
    [InlineData("500ms", 500)]
    [InlineData("1m", 60_000)]
    [InlineData("1.5s", 1_500)]
    [InlineData("2", 2_000)]
    public void Parses_milliseconds_seconds_and_minutes(string text, double milliseconds)
    {
        Assert.True(DurationText.TryParse(text, out TimeSpan duration));
        Assert.Equal(TimeSpan.FromMilliseconds(milliseconds), duration);
    }

    [Theory]
    [InlineData("")]
    [InlineData("s")]
    [InlineData("0s")]
    [InlineData("-1s")]
    [InlineData("10x")]
    [InlineData("10h")]
    [InlineData("99999m")]
    public void Rejects_what_is_not_a_positive_duration(string text) =>
        Assert.False(DurationText.TryParse(text, out _));

    [Theory]
    [InlineData(60_000, "1m")]
    [InlineData(10_000, "10s")]
    [InlineData(2_500, "2.5s")]
    [InlineData(500, "500ms")]
    public void Formats_in_the_largest_short_unit(double milliseconds, string expected) =>
        Assert.Equal(expected, DurationText.Format(TimeSpan.FromMilliseconds(milliseconds)));
}
