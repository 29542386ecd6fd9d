using System.Text;

namespace XCall.Generator;

/// <summary>FNV-1a over UTF-8: stable across machines, runtimes and compiler versions (string.GetHashCode is not).</summary>
internal static class Fnv
{
    public static uint Hash32(string text)
    {
        uint hash = 2166136261;
        foreach (byte b in Encoding.UTF8.GetBytes(text))
        {
            hash = unchecked((hash ^ b) * 16777619);
        }
        return hash;
    }

    public static ulong Hash64(string text)
    {
        ulong hash = 14695981039346656037;
        foreach (byte b in Encoding.UTF8.GetBytes(text))
        {
            hash = unchecked((hash ^ b) * 1099511628211);
        }
        return hash;
    }
}
