using System.Globalization;
using System.Runtime.InteropServices;

namespace XCall.Cli;

/// <summary>Parses <c>xcall</c>'s arguments and runs the command.</summary>
internal static class CommandLine
{
    private const string Usage = """
        usage: xcall run -n N [--store ADDRESS] [--job-id ID] -- PROGRAM [ARGS...]
               xcall worker --assembly PROGRAM.dll [--pool NAME] [--slots N] [--listen ADDRESS]

          run    starts N ranks of PROGRAM on this machine with XCALL_RANK, XCALL_SIZE, XCALL_JOB_ID and
                 XCALL_STORE set, prefixes their output with "[rank] ", and when a rank exits with a
                 non-zero code ends the others and exits with that code. Ctrl+C or SIGTERM ends
                 every rank (exit code 130).
          -n N           the number of ranks (at least 1)
          --store ADDR   rank 0's store address (default tcp://127.0.0.1:<free port>/xcall-store-<job id>)
          --job-id ID    the job id (default run<pid of xcall>)

          worker serves as a worker host for PROGRAM: loads its assembly, runs the setup its
                 [assembly: XCallWorker(typeof(...))] names (the processes DistParallel ships, the
                 parallel objects placed there), and announces itself in this machine's directory
                 (or, started as a rank, in its world's) until Ctrl+C or SIGTERM ends it.
          --assembly P   the program's assembly (its dependencies come from P's deps.json)
          --pool NAME    the pool it joins (default $XCALL_WORKER_POOL, else "default")
          --slots N      how many processes it runs at once (default 1)
          --listen ADDR  also answer at ADDR, e.g. tcp://0.0.0.0:7000/xcall-worker, for programs on
                         other machines that list it in XCALL_WORKERS
        """;

    /// <summary>Runs the command line; returns the process's exit code.</summary>
    public static async Task<int> RunAsync(string[] args)
    {
        if (args.Length == 0 || args[0] is "-h" or "--help" or "help")
        {
            Console.Error.WriteLine(Usage);
            return args.Length == 0 ? 2 : 0;
        }
        if (args[0] is not ("run" or "worker"))
        {
            Console.Error.WriteLine($"xcall: unknown command '{args[0]}'.");
            Console.Error.WriteLine(Usage);
            return 2;
        }
        RunSettings? settings = null;
        WorkerSettings? worker = null;
        string? error;
        if (args[0] == "run")
        {
            settings = ParseRun(args.AsSpan(1), out error);
        }
        else
        {
            worker = ParseWorker(args.AsSpan(1), out error);
        }
        if (settings is null && worker is null)
        {
            Console.Error.WriteLine($"xcall {args[0]}: {error}");
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
            return worker is not null
                ? await WorkerCommand.RunAsync(worker, Console.Out, Console.Error, cancel.Token).ConfigureAwait(false)
                : await new WorldRun(settings!, Console.Out, Console.Error).RunAsync(cancel.Token).ConfigureAwait(false);
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

    /// <summary>Parses the arguments after <c>worker</c>; null and an error on a mistake.</summary>
    internal static WorkerSettings? ParseWorker(ReadOnlySpan<string> args, out string? error)
    {
        string? assembly = null;
        string? pool = null;
        string? listen = null;
        int slots = 1;
        if (args.Length % 2 != 0)
        {
            error = $"'{args[^1]}' needs a value.";
            return null;
        }
        for (int i = 0; i < args.Length; i += 2)
        {
            string value = args[i + 1];
            switch (args[i])
            {
                case "--assembly":
                    assembly = value;
                    break;
                case "--pool":
                    pool = value;
                    break;
                case "--listen":
                    listen = value;
                    break;
                case "--slots":
                    if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out slots) || slots < 1)
                    {
                        error = $"--slots wants a number of at least 1, not '{value}'.";
                        return null;
                    }
                    break;
                default:
                    error = $"unknown option '{args[i]}'.";
                    return null;
            }
        }
        if (assembly is null)
        {
            error = "--assembly PROGRAM.dll is required.";
            return null;
        }
        error = null;
        return new WorkerSettings(assembly, pool, slots, listen);
    }
}
