namespace XCall.Tests.Contracts;

/// <summary>Streams of values: results and parameters of type <see cref="IAsyncEnumerable{T}"/>.</summary>
[Remotable]
public interface IStreams
{
    /// <summary>The ints from <paramref name="start"/>, <paramref name="count"/> of them, in order.</summary>
    IAsyncEnumerable<int> Range(int start, int count);

    /// <summary><paramref name="count"/> strings: <paramref name="prefix"/> and the index.</summary>
    IAsyncEnumerable<string> Words(string prefix, int count);

    /// <summary><paramref name="count"/> orders (a marshalled class), with ids 0.. and one line each.</summary>
    IAsyncEnumerable<Order> Orders(int count);

    /// <summary>
    /// 0, 1, 2, ... without end, as fast as it is pulled; counts what it produced under <paramref name="key"/> (see
    /// <see cref="Produced"/>) and reports how it ended (see <see cref="Ended"/>).
    /// </summary>
    IAsyncEnumerable<int> Endless(string key, CancellationToken cancellationToken);

    /// <summary>Yields 1, then waits on its token for ever; reports how it ended under <paramref name="key"/>.</summary>
    IAsyncEnumerable<int> Waiting(string key, CancellationToken cancellationToken);

    /// <summary>Yields 0 .. <paramref name="before"/> - 1, then throws InvalidOperationException("boom after N").</summary>
    IAsyncEnumerable<int> Failing(int before);

    /// <summary>How many items the producer under <paramref name="key"/> has produced so far.</summary>
    Task<int> Produced(string key);

    /// <summary>Completes once the producer under <paramref name="key"/> ran its finally block: "cancelled" when its
    /// token was cancelled then, else "disposed".</summary>
    Task<string> Ended(string key);

    /// <summary>Sums a stream the caller produces.</summary>
    Task<long> Sum(IAsyncEnumerable<int> values);

    /// <summary>Joins a stream of strings the caller produces, with commas.</summary>
    Task<string> Join(IAsyncEnumerable<string> words);

    /// <summary>Sums the first <paramref name="count"/> items of a stream the caller produces, then stops reading it.</summary>
    Task<long> SumFirst(IAsyncEnumerable<int> values, int count);

    /// <summary><see cref="Range"/> from an async method: the stream is the result of a <see cref="Task{TResult}"/>.</summary>
    Task<IAsyncEnumerable<int>> RangeLater(int start, int count);

    /// <summary>A data type that carries a stream: <paramref name="label"/> and the ints 0 .. <paramref name="count"/> - 1.</summary>
    LabelledItems Labelled(string label, int count);

    /// <summary>Sums a stream the caller produces, after a one-way call returned; <see cref="Drained"/> gives the sum.</summary>
    [OneWay]
    void Drain(string key, IAsyncEnumerable<int> values);

    /// <summary>Completes with what <see cref="Drain"/> summed under <paramref name="key"/> once its stream ended.</summary>
    Task<long> Drained(string key);
}

/// <summary>A label and a stream of ints, as one value (a stream inside a data type).</summary>
public sealed class LabelledItems
{
    public string Label { get; set; } = "";

    public IAsyncEnumerable<int>? Items { get; set; }
}
