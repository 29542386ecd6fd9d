namespace XCall.Communicator;

public sealed partial class Communicator
{
    /// <summary>
    /// Splits the communicator (every rank calls it, as MPI's <c>MPI_Comm_split</c>): the ranks that pass the same
    /// <paramref name="color"/> form a new communicator, ranked by <paramref name="key"/> and then by their rank
    /// here. A rank that passes a negative color joins none and gets null.
    /// </summary>
    public Communicator? Split(int color, int key)
    {
        int sequence = ++_splits;
        int[] all = new int[2 * Size];
        Allgather([color, key], all);
        if (color < 0)
        {
            return null;
        }
        int[] members = [.. Enumerable.Range(0, Size).Where(r => all[2 * r] == color).OrderBy(r => all[2 * r + 1]).ThenBy(r => r)];
        return new Communicator(_messaging, [.. members.Select(r => _worldRanks[r])], SplitContext(_context, sequence, color));
    }

    /// <summary>
    /// The context of a split's communicator, the same on every member: the ranks split in the same order, so the
    /// parent's context, the split's sequence number and the color name it. A 62-bit mix of the three (the context
    /// is shifted left once for the collective bit), never the world's context 1.
    /// </summary>
    private static long SplitContext(long parent, int sequence, int color)
    {
        ulong x = (ulong)parent * 0x9E3779B97F4A7C15UL ^ ((ulong)(uint)sequence << 32 | (uint)color);
        x ^= x >> 30;
        x *= 0xBF58476D1CE4E5B9UL;
        x ^= x >> 27;
        x *= 0x94D049BB133111EBUL;
        x ^= x >> 31;
        long context = (long)(x & 0x3FFF_FFFF_FFFF_FFFFUL);
        return context <= 1 ? context + 2 : context;
    }
}
