using System.Runtime.CompilerServices;

namespace XCall.Marshal;

/// <summary>
/// Refuses hash keys a peer chose to collide. The hash code of an integer, an enum, a <see cref="Guid"/> or a
/// user type is not randomized, so a peer can pick keys that all land in one bucket of the set or dictionary
/// being filled and make each add walk all the keys before it: quadratic reading, which a message of a few
/// hundred kilobytes turns into seconds of CPU. Before such keys are added, they are counted per bucket of the
/// collection's own table, sized for all of them so it does not grow meanwhile; more than
/// <see cref="MarshalLimits.MaxKeysPerBucket"/> in one bucket is a protocol error, which bounds the adding to
/// linear time. Strings hash with a per-process random seed and are not counted.
/// </summary>
internal struct KeySpread
{
    private readonly int[] _perBucket;
    private readonly int _limit;

    private KeySpread(int buckets, int limit)
    {
        _perBucket = new int[buckets];
        _limit = limit;
    }

    /// <summary>Whether keys of <typeparamref name="T"/> need counting: not strings, and only when more than the limit of them arrive.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool Needed<T>(int count, MarshalLimits limits) => typeof(T) != typeof(string) && count > limits.MaxKeysPerBucket;

    /// <summary>Starts counting for a table of <paramref name="buckets"/> buckets (its capacity: a prime, one bucket per entry).</summary>
    public static KeySpread For(int buckets, MarshalLimits limits) => new(buckets, limits.MaxKeysPerBucket);

    /// <summary>Counts <paramref name="key"/> where the collection will put it.</summary>
    public readonly void Add<T>(T key)
    {
        if (key is null)
        {
            return; // refused when it is added
        }
        uint bucket = (uint)EqualityComparer<T>.Default.GetHashCode(key) % (uint)_perBucket.Length;
        if (++_perBucket[bucket] > _limit)
        {
            throw new XCallProtocolException(
                $"More than {_limit} keys of a {typeof(T).Name} set or dictionary fall in one hash bucket: chosen to collide, they would make reading quadratic (MarshalLimits.MaxKeysPerBucket).");
        }
    }
}
