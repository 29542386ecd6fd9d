using System.Globalization;

namespace XCall;

/// <summary>
/// An XCall address: <c>domain://name</c>, <c>shm://name</c> or <c>tcp://host:port/name</c>. The name
/// identifies the server on its machine; for TCP it also lets a client on the server's machine use shared
/// memory instead.
/// </summary>
public sealed record XCallAddress
{
    private XCallAddress(string scheme, string? host, int port, string name)
    {
        Scheme = scheme;
        Host = host;
        Port = port;
        Name = name;
    }

    /// <summary><c>domain</c>, <c>shm</c> or <c>tcp</c>.</summary>
    public string Scheme { get; }

    /// <summary>The host of a TCP address, else null.</summary>
    public string? Host { get; }

    /// <summary>The port of a TCP address, else 0.</summary>
    public int Port { get; }

    /// <summary>The server's name (may be empty for a TCP address).</summary>
    public string Name { get; }

    /// <summary>Parses an address.</summary>
    /// <exception cref="FormatException">The text is not a valid XCall address; the message says why.</exception>
    public static XCallAddress Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        int sep = text.IndexOf("://", StringComparison.Ordinal);
        if (sep <= 0)
        {
            throw new FormatException($"'{text}' is not an XCall address: expected domain://name, shm://name or tcp://host:port/name.");
        }
        string scheme = text[..sep].ToLowerInvariant();
        string rest = text[(sep + 3)..];
        switch (scheme)
        {
            case "domain":
            case "shm":
                if (rest.Length == 0 || rest.Contains('/') || rest.Contains(':'))
                {
                    throw new FormatException($"'{text}': a {scheme} address is {scheme}://name, with a name of letters, digits, '-', '_' or '.'.");
                }
                return new XCallAddress(scheme, null, 0, ValidName(rest, text));
            case "tcp":
            {
                int slash = rest.IndexOf('/');
                string hostPort = slash < 0 ? rest : rest[..slash];
                string name = slash < 0 ? "" : rest[(slash + 1)..];
                int colon = hostPort.LastIndexOf(':');
                if (colon <= 0 || !int.TryParse(hostPort[(colon + 1)..], NumberStyles.None, CultureInfo.InvariantCulture, out int port) || port > 65535)
                {
                    throw new FormatException($"'{text}': a tcp address is tcp://host:port/name with a port from 0 to 65535.");
                }
                string host = hostPort[..colon].Trim('[', ']');
                return new XCallAddress(scheme, host, port, name.Length == 0 ? "" : ValidName(name, text));
            }
            default:
                throw new FormatException($"'{text}': unknown scheme '{scheme}' (known: domain, shm, tcp).");
        }
    }

    private static string ValidName(string name, string text)
    {
        foreach (char c in name)
        {
            if (!char.IsAsciiLetterOrDigit(c) && c is not ('-' or '_' or '.'))
            {
                throw new FormatException($"'{text}': the name '{name}' may hold only letters, digits, '-', '_' and '.'.");
            }
        }
        return name;
    }

    /// <inheritdoc/>
    public override string ToString() => Scheme switch
    {
        "tcp" => $"tcp://{(Host!.Contains(':') ? $"[{Host}]" : Host)}:{Port}/{Name}",
        _ => $"{Scheme}://{Name}",
    };
}
