namespace XCall.Cluster;

/// <summary>What a rank publishes in the store when it joins: its node and the addresses of its server.</summary>
/// <param name="Node">The rank's node.</param>
/// <param name="TcpAddress">Its server's TCP address, for ranks on other nodes.</param>
/// <param name="ShmName">Its server's shared-memory name, for ranks on its node.</param>
internal sealed record PeerCard(string Node, string TcpAddress, string ShmName)
{
    public override string ToString() => $"{Node}\n{TcpAddress}\n{ShmName}";

    public static PeerCard Parse(int rank, string text)
    {
        string[] parts = text.Split('\n');
        return parts.Length == 3
            ? new PeerCard(parts[0], parts[1], parts[2])
            : throw new FormatException($"rank {rank} published a malformed card: '{text}'.");
    }
}
