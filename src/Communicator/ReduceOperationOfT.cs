namespace XCall.Communicator;

/// <summary>An operation that reductions (<see cref="Communicator.Reduce{T}(T[], T[], ReduceOperation{T}, int)"/>, <see cref="Communicator.Allreduce{T}(T[], T[], ReduceOperation{T})"/>) combine values with; see <see cref="ReduceOperation"/>.</summary>
/// <typeparam name="T">The values' type.</typeparam>
public abstract class ReduceOperation<T> where T : unmanaged
{
    /// <summary>Combines each of <paramref name="values"/> into the value at the same index of <paramref name="into"/>.</summary>
    /// <exception cref="ArgumentException">The spans' lengths differ.</exception>
    public abstract void Combine(ReadOnlySpan<T> values, Span<T> into);

    /// <summary>Throws when the spans' lengths differ.</summary>
    protected static void CheckLengths(ReadOnlySpan<T> values, Span<T> into)
    {
        if (values.Length != into.Length)
        {
            throw new ArgumentException($"Cannot combine {values.Length} values into {into.Length}.", nameof(into));
        }
    }
}
