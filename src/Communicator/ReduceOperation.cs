using System.Numerics;

namespace XCall.Communicator;

/// <summary>
/// The built-in reduction operations (MPI's <c>MPI_SUM</c>, <c>MPI_PROD</c>, <c>MPI_MIN</c>, <c>MPI_MAX</c>) and
/// user operations. Collectives combine values in whatever order their algorithm needs, so an operation must be
/// associative and commutative.
/// </summary>
public static class ReduceOperation
{
    /// <summary>The sum.</summary>
    public static ReduceOperation<T> Sum<T>() where T : unmanaged, INumber<T> => VectorOperation<T>.Sum;

    /// <summary>The product.</summary>
    public static ReduceOperation<T> Product<T>() where T : unmanaged, INumber<T> => VectorOperation<T>.Product;

    /// <summary>The smallest value.</summary>
    public static ReduceOperation<T> Min<T>() where T : unmanaged, INumber<T> => VectorOperation<T>.Min;

    /// <summary>The largest value.</summary>
    public static ReduceOperation<T> Max<T>() where T : unmanaged, INumber<T> => VectorOperation<T>.Max;

    /// <summary>A user operation that combines two values (MPI's <c>MPI_Op_create</c>, commutative).</summary>
    public static ReduceOperation<T> Create<T>(Func<T, T, T> combine) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(combine);
        return new UserOperation<T>(combine);
    }

    private sealed class UserOperation<T>(Func<T, T, T> combine) : ReduceOperation<T> where T : unmanaged
    {
        public override void Combine(ReadOnlySpan<T> values, Span<T> into)
        {
            CheckLengths(values, into);
            for (int i = 0; i < values.Length; i++)
            {
                into[i] = combine(into[i], values[i]);
            }
        }
    }

    private sealed class VectorOperation<T> : ReduceOperation<T> where T : unmanaged, INumber<T>
    {
        public static readonly VectorOperation<T> Sum = new(static (a, b) => a + b, static (a, b) => a + b);
        public static readonly VectorOperation<T> Product = new(static (a, b) => a * b, static (a, b) => a * b);
        public static readonly VectorOperation<T> Min = new(T.Min, Vector.Min);
        public static readonly VectorOperation<T> Max = new(T.Max, Vector.Max);

        private readonly Func<T, T, T> _scalar;
        private readonly Func<Vector<T>, Vector<T>, Vector<T>> _vector;

        private VectorOperation(Func<T, T, T> scalar, Func<Vector<T>, Vector<T>, Vector<T>> vector)
        {
            _scalar = scalar;
            _vector = vector;
        }

        public override void Combine(ReadOnlySpan<T> values, Span<T> into)
        {
            CheckLengths(values, into);
            int i = 0;
            if (Vector.IsHardwareAccelerated && Vector<T>.IsSupported)
            {
                for (; i <= values.Length - Vector<T>.Count; i += Vector<T>.Count)
                {
                    _vector(new Vector<T>(into[i..]), new Vector<T>(values[i..])).CopyTo(into[i..]);
                }
            }
            for (; i < values.Length; i++)
            {
                into[i] = _scalar(into[i], values[i]);
            }
        }
    }
}
