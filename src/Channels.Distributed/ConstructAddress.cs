using System.Globalization;

namespace XCall.Channels.Distributed;

/// <summary>
/// Where a named construct lives: the rank that hosts it, its id there, its kind, and the address that rank serves
/// at as seen from its own node (what processes that each joined a world of their own use to reach it); the value
/// its name holds in the directory.
/// </summary>
internal readonly record struct ConstructAddress(int Rank, int Id, ConstructKind Kind, string Server)
{
    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"{Rank} {Id} {Kind} {Server}");

    /// <exception cref="FormatException">The directory holds something else under the name.</exception>
    public static ConstructAddress Parse(string name, string text)
    {
        string[] parts = text.Split(' ');
        if (parts.Length == 4
            && int.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out int rank)
            && int.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out int id)
            && Enum.TryParse(parts[2], out ConstructKind kind) && Enum.IsDefined(kind))
        {
            return new ConstructAddress(rank, id, kind, parts[3]);
        }
        throw new FormatException($"The name '{name}' is registered with '{text}', which is not a named CSP construct.");
    }
}
