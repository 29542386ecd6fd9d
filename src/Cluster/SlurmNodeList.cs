using System.Globalization;
using System.Text;

namespace XCall.Cluster;

/// <summary>Slurm's compressed host lists (<c>node[1-3,07],gpu[01-02]-ib,login</c>) expanded to host names.</summary>
public static class SlurmNodeList
{
    /// <summary>
    /// Expands <paramref name="list"/>: comma-separated hosts, each with any number of bracket groups of
    /// numbers and ranges; a range keeps the zero padding of its first number (<c>n[08-10]</c> is n08, n09, n10).
    /// </summary>
    /// <exception cref="FormatException">A bracket is not closed, or a range is not two numbers low to high.</exception>
    public static IReadOnlyList<string> Expand(string list)
    {
        ArgumentNullException.ThrowIfNull(list);
        var hosts = new List<string>();
        foreach (string host in SplitTopLevel(list))
        {
            if (host.Length > 0)
            {
                ExpandHost(host, 0, new StringBuilder(), hosts, list);
            }
        }
        return hosts;
    }

    /// <summary>Splits at the commas outside brackets.</summary>
    private static List<string> SplitTopLevel(string list)
    {
        var parts = new List<string>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < list.Length; i++)
        {
            switch (list[i])
            {
                case '[':
                    depth++;
                    break;
                case ']':
                    depth--;
                    break;
                case ',' when depth == 0:
                    parts.Add(list[start..i].Trim());
                    start = i + 1;
                    break;
            }
        }
        parts.Add(list[start..].Trim());
        return parts;
    }

    private static void ExpandHost(string host, int at, StringBuilder prefix, List<string> hosts, string list)
    {
        int open = host.IndexOf('[', at);
        if (open < 0)
        {
            hosts.Add(prefix.Append(host, at, host.Length - at).ToString());
            return;
        }
        int close = host.IndexOf(']', open);
        if (close < 0)
        {
            throw new FormatException($"'{list}': the bracket in '{host}' is not closed.");
        }
        string literal = host[at..open];
        foreach (string range in host[(open + 1)..close].Split(','))
        {
            foreach (string number in ExpandRange(range.Trim(), list))
            {
                var next = new StringBuilder(prefix.ToString()).Append(literal).Append(number);
                ExpandHost(host, close + 1, next, hosts, list);
            }
        }
    }

    private static IEnumerable<string> ExpandRange(string range, string list)
    {
        int dash = range.IndexOf('-');
        string low = dash < 0 ? range : range[..dash];
        string high = dash < 0 ? range : range[(dash + 1)..];
        if (!int.TryParse(low, NumberStyles.None, CultureInfo.InvariantCulture, out int from)
            || !int.TryParse(high, NumberStyles.None, CultureInfo.InvariantCulture, out int to) || to < from)
        {
            throw new FormatException($"'{list}': '{range}' is not a number or a range low-high.");
        }
        for (int i = from; i <= to; i++)
        {
            yield return i.ToString(CultureInfo.InvariantCulture).PadLeft(low.Length, '0');
        }
    }
}
