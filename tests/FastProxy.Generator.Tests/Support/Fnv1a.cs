using System.Text;

namespace XCall.Generator.Tests.Support;

/// <summary>
/// FNV-1a over UTF-8, written from the published constants rather than taken from the generator, so the tests
/// catch a change to the generator's hashing.
/// </summary>
internal static class Fnv1a
{
    private const uint OffsetBasis32 = 0x811c9dc5;
    private const uint Prime32 = 0x01000193;

    public static uint Hash32(string text)
    {
        uint hash = OffsetBasis32;
        foreach (byte b in Encoding.UTF8.GetBytes(text))
        {
            hash ^= b;
            hash = unchecked(hash * Prime32);
        }
        return hash;
    }
}
