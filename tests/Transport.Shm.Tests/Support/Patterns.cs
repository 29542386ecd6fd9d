namespace XCall.Transport.Shm.Tests.Support;

/// <summary>Payload bytes that depend on their position and a seed, so a misplaced byte is caught.</summary>
internal static class Patterns
{
    public static byte At(long position, int seed) => (byte)(position ^ (position >> 8) ^ (position >> 16) ^ (seed * 31));

    public static byte[] Make(int length, int seed)
    {
        byte[] bytes = new byte[length];
        Fill(bytes, 0, seed);
        return bytes;
    }

    public static void Fill(Span<byte> span, long offset, int seed)
    {
        for (int i = 0; i < span.Length; i++)
        {
            span[i] = At(offset + i, seed);
        }
    }

    public static int FirstMismatch(ReadOnlySpan<byte> span, long offset, int seed)
    {
        for (int i = 0; i < span.Length; i++)
        {
            if (span[i] != At(offset + i, seed))
            {
                return i;
            }
        }
        return -1;
    }
}
