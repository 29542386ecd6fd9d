using System.Globalization;
using System.Runtime.InteropServices;

namespace XCall.Cli;

/// <summary>Parses <c>xcall</c>'s arguments and runs the command.</summary>
internal static class CommandLine
{
    private const string Usage = """
        usage: xcall run -n N [--store ADDRESS] [--job-id ID] -- PROGRAM [ARGS...]

          run    starts N ranks of PROGRAM on this machine with XCALL_RANK, XCALL_SIZE, XCALL_JOB_ID and
                 XCALL_STORE set, prefixes their output with "[rank] ", and when a rank exits with a
                 non-zero code ends the others and exits with that code. Ctrl+C or SIGTERM ends
                 every rank (exit code 130).
          -n N           the number of ranks (at least 1)
          --store ADDR   rank 0's store address (default tcp://127.0.0.1:<free port>/xcall-store-<job id>)
          --job-id ID    the job id (default run<pid of xcall>)
        """;

    /// <summary>Runs the command line; returns the process's exit code.</summary>
    public static async Task<int> RunAsync(string[] args)
    {
        if (args.Length == 0 || args[0] is "-h" or "--help" or "help")
        {
            Console.Error.WriteLine(Usage);
            return args.Length == 0 ? 2 : 0;
        }
        if (args[0] != "run")
        {
            Console.Error.WriteLine($"xcall: unknown command '{args[0]}'.");
            Console.Error.WriteLine(Usage);
            return 2;
        }
        RunSettings? settings = ParseRun(args.AsSpan(1), out string? error);
        if (settings is null)
        {
            Console.Error.WriteLine($"xcall run: {error}");
            Console.Error.WriteLine(Usage);
            return 2;
        }
        using var cancel = new CancellationTokenSource();
        ConsoleCancelEventHandler onCancel = (_, e) =>
        {
            e.Cancel = true; // end the ranks first, then exit
            cancel.Cancel();
        };
        Console.CancelKeyPress += onCancel;
        // A batch system ends a job with SIGTERM: end the ranks too instead of leaving them behind.
        using PosixSignalRegistration onTerm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
        {
            context.Cancel = true;
            cancel.Cancel();
        });
        try
        {
            return await new WorldRun(settings, Console.Out, Console.Error).RunAsync(cancel.Token).ConfigureAwait(false);
        }
        finally
        {
            Console.CancelKeyPress -= onCancel;
        }
    }

    /// <summary>Parses the arguments after <c>run</c>; null and an error on a mistake.</summary>
    internal static RunSettings? ParseRun(ReadOnlySpan<string> args, out string? error)
    {
        int ranks = 0;
        string? store = null;
        string? jobId = null;
        int i = 0;
        for (; i < args.Length && args[i] != "--"; i++)
        {
            string option = args[i];
            if (i + 1 >= args.Length)
            {
                error = $"'{option}' needs a value.";
                return null;
            }
            string value = args[++i];
            switch (option)
            {
                case "-n" or "-np" or "--ranks":
                    if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out ranks) || ranks < 1)
                    {
                        error = $"-n wants a number of ranks of at least 1, not '{value}'.";
                        return null;
                    }
                    break;
                case "--store":
                    store = value;
                    break;
                case "--job-id":
                    jobId = value;
                    break;
                default:
                    error = $"unknown option '{option}'.";
                    return null;
            }
        }
        if (ranks == 0)
        {
            error = "-n N is required.";
            return null;
        }
        if (i + 1 >= args.Length)
        {
            error = "the program to run follows '--'.";
            return null;
        }
        error = null;
        return new RunSettings(ranks, args[i + 1], [.. args[(i + 2)..]], store, jobId ?? $"run{Environment.ProcessId}");
    }
}
