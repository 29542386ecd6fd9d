using System.Globalization;

namespace XCall.Profile;

/// <summary>The options of one command: <c>--name value</c>, <c>--name=value</c>, and <c>-h</c> / <c>--help</c>.</summary>
internal sealed class CommandArguments
{
    private readonly Dictionary<string, string> _values = new(StringComparer.Ordinal);

    private CommandArguments(string command) => Command = command;

    /// <summary>The command the options belong to, for messages.</summary>
    public string Command { get; }

    /// <summary>True when help was asked for.</summary>
    public bool Help { get; private set; }

    /// <summary>Parses <paramref name="args"/>, accepting only the options named in <paramref name="options"/> (without dashes).</summary>
    /// <exception cref="ProfileException">An unknown option, a positional argument, or an option without a value.</exception>
    public static CommandArguments Parse(string command, IReadOnlyList<string> args, params string[] options)
    {
        var parsed = new CommandArguments(command);
        for (int i = 0; i < args.Count; i++)
        {
            string arg = args[i];
            if (arg is "-h" or "--help")
            {
                parsed.Help = true;
                continue;
            }
            if (!arg.StartsWith("--", StringComparison.Ordinal))
            {
                throw Usage(command, $"unexpected argument '{arg}'");
            }
            string name = arg[2..];
            string? value = null;
            int equals = name.IndexOf('=', StringComparison.Ordinal);
            if (equals >= 0)
            {
                value = name[(equals + 1)..];
                name = name[..equals];
            }
            if (!options.Contains(name, StringComparer.Ordinal))
            {
                throw Usage(command, $"unknown option '--{name}'");
            }
            if (value is null)
            {
                if (i + 1 >= args.Count)
                {
                    throw Usage(command, $"option '--{name}' needs a value");
                }
                value = args[++i];
            }
            parsed._values[name] = value;
        }
        return parsed;
    }

    /// <summary>The value of option <paramref name="name"/>, or <paramref name="fallback"/> when it was not given.</summary>
    public string Get(string name, string fallback) => _values.GetValueOrDefault(name, fallback);

    /// <summary>The value of <c>--pid</c>.</summary>
    /// <exception cref="ProfileException">It is missing or not a positive number.</exception>
    public int GetPid()
    {
        if (!_values.TryGetValue("pid", out string? text))
        {
            throw Usage(Command, "option '--pid' is required");
        }
        if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int pid) || pid <= 0)
        {
            throw Usage(Command, $"'{text}' is not a process id");
        }
        return pid;
    }

    /// <summary>A usage error of <paramref name="command"/>.</summary>
    public static ProfileException Usage(string command, string message) =>
        new(ExitCodes.Usage, $"{command}: {message} (see 'xcall-profile {command} --help')");
}
