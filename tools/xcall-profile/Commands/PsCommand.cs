using System.Globalization;
using System.Text;
using XCall.Profile.Processes;

namespace XCall.Profile.Commands;

/// <summary><c>xcall-profile ps</c>: the attachable .NET processes, XCall users marked.</summary>
internal static class PsCommand
{
    /// <summary>The command's name on the command line.</summary>
    public const string Name = "ps";

    /// <summary>Runs the command.</summary>
    public static int Run(IReadOnlyList<string> args)
    {
        CommandArguments options = CommandArguments.Parse(Name, args);
        if (options.Help)
        {
            Console.Out.Write(HelpText.Ps);
            return ExitCodes.Success;
        }
        IReadOnlyList<DotnetProcess> processes = ProcessCatalog.List();
        if (processes.Count == 0)
        {
            Console.Out.WriteLine("no attachable .NET processes (only processes of this user with the same TMPDIR are visible)");
            return ExitCodes.Success;
        }
        int pidWidth = Math.Max(3, processes.Max(p => p.Pid.ToString(CultureInfo.InvariantCulture).Length));
        int nameWidth = Math.Max(4, processes.Max(p => p.Name.Length));
        var text = new StringBuilder();
        text.Append(CultureInfo.InvariantCulture, $"{"PID".PadLeft(pidWidth)}  XCALL  {"NAME".PadRight(nameWidth)}  COMMAND LINE\n");
        foreach (DotnetProcess process in processes)
        {
            string mark = process.LoadsXCall switch { true => "*", false => "", null => "?" };
            text.Append(CultureInfo.InvariantCulture,
                $"{process.Pid.ToString(CultureInfo.InvariantCulture).PadLeft(pidWidth)}  {mark,-5}  {process.Name.PadRight(nameWidth)}  {process.CommandLine}\n");
        }
        Console.Out.Write(text.ToString());
        return ExitCodes.Success;
    }
}
