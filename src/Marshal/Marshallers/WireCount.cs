namespace XCall.Marshal;

/// <summary>
/// How collection readers size what they allocate from a count read off the wire. A count is only a claim:
/// <see cref="MarshalReader.ReadLength"/> checks it against one byte per element, but an element may take
/// 1 byte on the wire and 24 in memory, so a reader that allocated the whole count at once could be made to
/// allocate many times the message. Readers allocate at most <see cref="UpFront"/> elements before they read
/// any, and grow by doubling as elements actually arrive.
/// </summary>
internal static class WireCount
{
    /// <summary>Elements allocated before any is read.</summary>
    public const int UpFront = 1024;

    /// <summary>The capacity to start a collection of <paramref name="count"/> elements with.</summary>
    public static int InitialCapacity(int count) => Math.Min(count, UpFront);

    /// <summary>Makes room for element <paramref name="index"/> of <paramref name="count"/>: the array ends exactly <paramref name="count"/> long.</summary>
    public static void EnsureRoom<T>(ref T[] array, int index, int count)
    {
        if (index == array.Length)
        {
            Array.Resize(ref array, (int)Math.Min(2L * array.Length, count));
        }
    }

    /// <summary>Reads <paramref name="count"/> elements into an array of exactly that length.</summary>
    public static T[] ReadArray<T, TMarshaller>(ref MarshalReader reader, int count) where TMarshaller : IMarshaller<T>
    {
        var array = new T[InitialCapacity(count)];
        for (int i = 0; i < count; i++)
        {
            EnsureRoom(ref array, i, count);
            array[i] = TMarshaller.Read(ref reader);
        }
        return array;
    }
}
