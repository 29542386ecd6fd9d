using System.Runtime.InteropServices;
using XCall.Profile.Commands;

namespace XCall.Profile;

/// <summary>Entry point: picks the command, turns failures into one line on stderr and an exit code.</summary>
internal static class Program
{
    private static int Main(string[] args)
    {
        using var stop = new CancellationTokenSource();
        void Interrupt(PosixSignalContext context)
        {
            context.Cancel = true; // Stop the session cleanly and still print what was collected.
            stop.Cancel();
        }
        using PosixSignalRegistration interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, Interrupt);
        using PosixSignalRegistration terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, Interrupt);

        string command = args.Length > 0 ? args[0] : "--help";
        string[] options = args.Length > 0 ? args[1..] : [];
        try
        {
            switch (command)
            {
                case "ps":
                    return PsCommand.Run(options);
                case "collect":
                    return CollectCommand.Run(options, stop.Token);
                case "monitor":
                    return MonitorCommand.Run(options, stop.Token);
                case "-h" or "--help" or "help":
                    Console.Out.Write(HelpText.Main);
                    return ExitCodes.Success;
                default:
                    Console.Error.WriteLine($"xcall-profile: unknown command '{command}'");
                    Console.Error.Write(HelpText.Main);
                    return ExitCodes.Usage;
            }
        }
        catch (ProfileException ex)
        {
            Console.Error.WriteLine($"xcall-profile: {ex.Message}");
            return ex.ExitCode;
        }
    }
}
