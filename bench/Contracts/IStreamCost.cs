namespace XCall.Bench;

/// <summary>The stream row: an <see cref="IAsyncEnumerable{T}"/> result pulled to its end.</summary>
[Remotable]
public interface IStreamCost
{
    /// <summary>The ints 0 .. <paramref name="count"/> - 1.</summary>
    IAsyncEnumerable<int> Ints(int count);
}

/// <summary>Implementation of <see cref="IStreamCost"/>: an async iterator, as a user writes one.</summary>
public sealed class StreamCostService : IStreamCost
{
    public async IAsyncEnumerable<int> Ints(int count)
    {
        for (int i = 0; i < count; i++)
        {
            yield return i;
        }
    }
}
