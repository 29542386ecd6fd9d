namespace XCall.Bench;

/// <summary>The parallel suite's object: one-way calls that add to a sum, and a call that reads it.</summary>
[Remotable]
public interface IParallelSink
{
    /// <summary>Adds <paramref name="value"/> to the sum.</summary>
    [OneWay]
    void Add(int value);

    /// <summary>The sum of every value added.</summary>
    long Sum();
}

/// <summary>The object behind <see cref="IParallelSink"/>.</summary>
public sealed class ParallelSink : IParallelSink
{
    private long _sum;

    /// <inheritdoc/>
    /// <remarks>Atomic: a plain XCall service runs one-way calls concurrently on the pool (a parallel object runs them in order).</remarks>
    public void Add(int value) => Interlocked.Add(ref _sum, value);

    /// <inheritdoc/>
    public long Sum() => Interlocked.Read(ref _sum);
}
