using System.Diagnostics;
using XCall.Profile.Processes;
using XCall.Profile.Reports;
using XCall.Profile.Statistics;
using XCall.Profile.Tracing;

namespace XCall.Profile.Commands;

/// <summary><c>xcall-profile collect</c>: traces a process for a while, then prints the per-method report.</summary>
internal static class CollectCommand
{
    /// <summary>The command's name on the command line.</summary>
    public const string Name = "collect";

    /// <summary>Runs the command; <paramref name="stop"/> (Ctrl+C) ends the collection early.</summary>
    /// <exception cref="ProfileException">Bad options, an unusable process, or no calls seen.</exception>
    public static int Run(IReadOnlyList<string> args, CancellationToken stop)
    {
        CommandArguments options = CommandArguments.Parse(Name, args, "pid", "duration", "format");
        if (options.Help)
        {
            Console.Out.Write(HelpText.Collect);
            return ExitCodes.Success;
        }
        int pid = options.GetPid();
        string durationText = options.Get("duration", "10s");
        if (!DurationText.TryParse(durationText, out TimeSpan duration))
        {
            throw CommandArguments.Usage(Name, $"'{durationText}' is not a duration (examples: 500ms, 10s, 1m)");
        }
        string formatText = options.Get("format", "table");
        if (!ReportWriter.TryParseFormat(formatText, out ReportFormat format))
        {
            throw CommandArguments.Usage(Name, $"'{formatText}' is not a format (table, json or csv)");
        }

        ProcessCatalog.EnsureAttachable(pid);
        var calls = new CallAggregator();
        using XCallTraceSession session = XCallTraceSession.Start(pid, calls.Add);
        Console.Error.WriteLine($"collecting XCall calls of process {pid} for {DurationText.Format(duration)} (Ctrl+C to stop early)");
        var clock = Stopwatch.StartNew();
        bool cutShort;
        try
        {
            cutShort = session.Completion.Wait(duration, stop);
        }
        catch (OperationCanceledException)
        {
            cutShort = true;
        }
        TimeSpan watched = cutShort ? clock.Elapsed : duration;
        session.Stop();

        if (session.Error is not null)
        {
            throw new ProfileException(ExitCodes.SessionFailed, $"the EventPipe session of process {pid} broke: {session.Error.Message}", session.Error);
        }
        if (session.ProcessExited)
        {
            Console.Error.WriteLine($"process {pid} exited after {DurationText.Format(watched)}");
        }
        if (session.UnreadableEvents > 0)
        {
            Console.Error.WriteLine($"{session.UnreadableEvents} XCall events had an unknown layout and were skipped");
        }
        IReadOnlyList<CallSummary> rows = calls.Summarize();
        if (rows.Count == 0)
        {
            throw new ProfileException(ExitCodes.NoCalls, $"process {pid} made no XCall calls in {DurationText.Format(watched)}");
        }
        using Stream output = Console.OpenStandardOutput();
        ReportWriter.Write(new CallReport(pid, watched, rows), format, output);
        return ExitCodes.Success;
    }
}
