using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

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

    private abstract class VectorOperation<T> : ReduceOperation<T> where T : unmanaged, INumber<T>
    {
        public static readonly VectorOperation<T> Sum = new Loop<SumOf>();
        public static readonly VectorOperation<T> Product = new Loop<ProductOf>();
        public static readonly VectorOperation<T> Min = new Loop<MinOf>();
        public static readonly VectorOperation<T> Max = new Loop<MaxOf>();

        /// <summary>An operation on one value and on a vector of them, which the loop below inlines (a struct type argument).</summary>
        private interface IOperation
        {
            static abstract T Scalar(T a, T b);

            static abstract Vector<T> Vector(Vector<T> a, Vector<T> b);
        }

        private readonly struct SumOf : IOperation
        {
            public static T Scalar(T a, T b) => a + b;

            public static Vector<T> Vector(Vector<T> a, Vector<T> b) => a + b;
        }

        private readonly struct ProductOf : IOperation
        {
            public static T Scalar(T a, T b) => a * b;

            public static Vector<T> Vector(Vector<T> a, Vector<T> b) => a * b;
        }

        private readonly struct MinOf : IOperation
        {
            public static T Scalar(T a, T b) => T.Min(a, b);

            public static Vector<T> Vector(Vector<T> a, Vector<T> b) => System.Numerics.Vector.Min(a, b);
        }

        private readonly struct MaxOf : IOperation
        {
            public static T Scalar(T a, T b) => T.Max(a, b);

            public static Vector<T> Vector(Vector<T> a, Vector<T> b) => System.Numerics.Vector.Max(a, b);
        }

        private sealed class Loop<TOperation> : VectorOperation<T> where TOperation : struct, IOperation
        {
            // Fully optimized from the first call: a collective's first large reductions would otherwise run the
            // unoptimized tier, with no vector operation inlined.
            [MethodImpl(MethodImplOptions.AggressiveOptimization)]
            public override void Combine(ReadOnlySpan<T> values, Span<T> into)
            {
                CheckLengths(values, into);
                ref T from = ref MemoryMarshal.GetReference(values);
                ref T to = ref MemoryMarshal.GetReference(into);
                nuint length = (nuint)values.Length;
                nuint i = 0;
                if (System.Numerics.Vector.IsHardwareAccelerated && Vector<T>.IsSupported)
                {
                    nuint count = (nuint)Vector<T>.Count;
                    for (; i + count <= length; i += count)
                    {
                        TOperation.Vector(System.Numerics.Vector.LoadUnsafe(ref to, i), System.Numerics.Vector.LoadUnsafe(ref from, i)).StoreUnsafe(ref to, i);
                    }
                }
                for (; i < length; i++)
                {
                    Unsafe.Add(ref to, i) = TOperation.Scalar(Unsafe.Add(ref to, i), Unsafe.Add(ref from, i));
                }
            }
        }
    }
}
