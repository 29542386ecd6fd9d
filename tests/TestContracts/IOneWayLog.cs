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

    /// <summary>The values appended since the last call, in the order they were appended, and empties the log.</summary>
    int[] Take();
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
