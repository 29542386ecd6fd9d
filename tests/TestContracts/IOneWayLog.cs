namespace XCall.Tests.Contracts;

/// <summary>Records one-way calls in the order they ran, for tests of their order across processes.</summary>
[Remotable]
public interface IOneWayLog
{
    /// <summary>Appends <paramref name="value"/> to the log.</summary>
    [OneWay]
    void Append(int value);

    /// <summary>Appends <paramref name="value"/> to the log; a negative value is not appended, and the call throws.</summary>
    [OneWay]
    void AppendOrThrow(int value);

    /// <summary>Appends <paramref name="value"/>, <paramref name="scale"/> times 1,000 and the three fields of
    /// <paramref name="extra"/>, in that order: unmanaged arguments of several sizes, a padded struct among them.</summary>
    [OneWay]
    void AppendMixed(int value, double scale, MixedValue extra);

    /// <summary>The values appended since the last call, in the order they were appended, and empties the log.</summary>
    int[] Take();
}

/// <summary>A struct with padding between and after its fields, sent as its bytes.</summary>
public struct MixedValue
{
    public byte Tag;
    public long Big;
    public short Small;
}

/// <summary>The server side of <see cref="IOneWayLog"/>.</summary>
public sealed class OneWayLog : IOneWayLog
{
    private readonly List<int> _values = [];

    /// <inheritdoc/>
    public void Append(int value)
    {
        lock (_values)
        {
            _values.Add(value);
        }
    }

    /// <inheritdoc/>
    public void AppendOrThrow(int value)
    {
        if (value < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(value), value, "a negative value is refused");
        }
        Append(value);
    }

    /// <inheritdoc/>
    public void AppendMixed(int value, double scale, MixedValue extra)
    {
        lock (_values)
        {
            _values.AddRange([value, (int)(scale * 1000), extra.Tag, checked((int)extra.Big), extra.Small]);
        }
    }

    /// <inheritdoc/>
    public int[] Take()
    {
        lock (_values)
        {
            int[] taken = [.. _values];
            _values.Clear();
            return taken;
        }
    }
}
