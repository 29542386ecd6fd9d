namespace XCall.Parallel.Host;

/// <summary>The contract the object manager times when a world is joined: a one-way call that does nothing.</summary>
[Remotable]
internal interface ICalibration
{
    /// <summary>Adds <paramref name="value"/> to a sum.</summary>
    [OneWay]
    void Tick(int value);

    /// <summary>The sum.</summary>
    long Sum();
}

/// <summary>The object <see cref="ICalibration"/> calls.</summary>
internal sealed class Calibration : ICalibration
{
    private long _sum;

    public void Tick(int value) => _sum += value;

    public long Sum() => _sum;
}
