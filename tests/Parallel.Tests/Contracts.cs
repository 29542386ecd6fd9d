namespace XCall.Parallel.Tests;

/// <summary>A parallel object that records what it is sent, in order.</summary>
[Remotable]
public interface IRecorder
{
    /// <summary>Appends <paramref name="value"/>.</summary>
    [OneWay]
    void Append(int value);

    /// <summary>Throws <see cref="InvalidOperationException"/> with <paramref name="message"/>.</summary>
    [OneWay]
    void Fail(string message);

    /// <summary>How many values were appended.</summary>
    int Count();

    /// <summary>Every value appended, in the order they came.</summary>
    int[] Values();

    /// <summary>The rank that hosts this object.</summary>
    int HostRank();
}

/// <summary>A type whose calls take long (tens of microseconds): too coarse to agglomerate.</summary>
[Remotable]
public interface ICoarse
{
    /// <summary>Spins for <paramref name="microseconds"/>.</summary>
    [OneWay]
    void Work(int microseconds);

    /// <summary>How many calls ran.</summary>
    int Count();
}

internal sealed class Recorder(int rank) : IRecorder
{
    private readonly List<int> _values = [];

    public void Append(int value) => _values.Add(value);

    public void Fail(string message) => throw new InvalidOperationException(message);

    public int Count() => _values.Count;

    public int[] Values() => [.. _values];

    public int HostRank() => rank;
}

internal sealed class Coarse : ICoarse
{
    private int _count;

    public void Work(int microseconds)
    {
        long end = System.Diagnostics.Stopwatch.GetTimestamp() + (microseconds * System.Diagnostics.Stopwatch.Frequency / 1_000_000);
        while (System.Diagnostics.Stopwatch.GetTimestamp() < end)
        {
        }
        _count++;
    }

    public int Count() => _count;
}

/// <summary>A parallel object that passes a synchronous call on along a path of objects (a call chain across ranks).</summary>
[Remotable]
public interface IHop
{
    /// <summary>Calls <c>path[index + 1]</c> and returns its answer plus one; the last object of the path answers 1.</summary>
    int Relay(ParallelRef[] path, int index);

    /// <summary>Appends <paramref name="value"/>.</summary>
    [OneWay]
    void Append(int value);

    /// <summary>Every value appended, in order.</summary>
    int[] Values();
}

/// <summary>The object behind <see cref="IHop"/>; <paramref name="world"/> gives the world of its rank once joined.</summary>
internal sealed class Hop(Func<ParallelWorld> world) : IHop
{
    private readonly List<int> _values = [];

    public int Relay(ParallelRef[] path, int index) =>
        index + 1 == path.Length ? 1 : world().Attach<IHop>(path[index + 1]).Relay(path, index + 1) + 1;

    public void Append(int value) => _values.Add(value);

    public int[] Values() => [.. _values];
}
