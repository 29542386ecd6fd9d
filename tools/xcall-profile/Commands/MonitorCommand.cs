using System.Diagnostics;
using System.Globalization;
using System.Text;
using XCall.Profile.Processes;
using XCall.Profile.Reports;
using XCall.Profile.Statistics;
using XCall.Profile.Tracing;

namespace XCall.Profile.Commands;

/// <summary><c>xcall-profile monitor</c>: a live view of the last interval's calls and the totals.</summary>
internal static class MonitorCommand
{
    /// <summary>The command's name on the command line.</summary>
    public const string Name = "monitor";

    // Home the cursor and clear the screen, so each frame replaces the last one.
    private const string ClearScreen = "\u001b[H\u001b[2J";

    /// <summary>Runs the command until <paramref name="stop"/> (Ctrl+C) or until the process exits.</summary>
    /// <exception cref="ProfileException">Bad options or an unusable process.</exception>
    public static int Run(IReadOnlyList<string> args, CancellationToken stop)
    {
        CommandArguments options = CommandArguments.Parse(Name, args, "pid", "interval");
        if (options.Help)
        {
            Console.Out.Write(HelpText.Monitor);
            return ExitCodes.Success;
        }
        int pid = options.GetPid();
        string intervalText = options.Get("interval", "1s");
        if (!DurationText.TryParse(intervalText, out TimeSpan interval))
        {
            throw CommandArguments.Usage(Name, $"'{intervalText}' is not a duration (examples: 500ms, 1s)");
        }

        ProcessCatalog.EnsureAttachable(pid);
        var recent = new CallAggregator();
        var total = new CallAggregator();
        using XCallTraceSession session = XCallTraceSession.Start(pid, call =>
        {
            recent.Add(call);
            total.Add(call);
        }, heartbeat: interval);
        Console.Error.WriteLine($"monitoring XCall calls of process {pid} every {DurationText.Format(interval)} (Ctrl+C to stop)");
        bool interactive = !Console.IsOutputRedirected;
        using Stream output = Console.OpenStandardOutput();
        var clock = Stopwatch.StartNew();
        while (true)
        {
            bool ended;
            try
            {
                ended = session.Completion.Wait(interval, stop);
            }
            catch (OperationCanceledException)
            {
                break;
            }
            string frame = Render(pid, clock.Elapsed, interval, recent.SummarizeAndReset(), total.Summarize(), interactive);
            output.Write(Encoding.UTF8.GetBytes(frame));
            output.Flush();
            if (ended)
            {
                break;
            }
        }
        session.Stop();
        if (session.Error is not null)
        {
            throw new ProfileException(ExitCodes.SessionFailed, $"the EventPipe session of process {pid} broke: {session.Error.Message}", session.Error);
        }
        if (session.ProcessExited)
        {
            Console.Error.WriteLine($"process {pid} exited");
        }
        return ExitCodes.Success;
    }

    private static string Render(int pid, TimeSpan elapsed, TimeSpan interval, IReadOnlyList<CallSummary> recent, IReadOnlyList<CallSummary> total, bool interactive)
    {
        var text = new StringBuilder();
        // On a terminal each frame replaces the last; into a file or pipe, frames follow each other.
        text.Append(interactive ? ClearScreen : "\n");
        text.Append(CultureInfo.InvariantCulture, $"xcall-profile monitor: process {pid}, {elapsed:hh\\:mm\\:ss} (Ctrl+C to stop)\n\n");
        AppendSection(text, $"Last {DurationText.Format(interval)}", recent);
        text.Append('\n');
        AppendSection(text, $"Total over {DurationText.Format(TimeSpan.FromSeconds(Math.Round(elapsed.TotalSeconds)))}", total);
        return text.ToString();
    }

    private static void AppendSection(StringBuilder text, string title, IReadOnlyList<CallSummary> rows)
    {
        text.Append(CultureInfo.InvariantCulture, $"{title}: {rows.Sum(row => row.Calls):N0} calls\n");
        if (rows.Count == 0)
        {
            text.Append("  (no calls)\n");
            return;
        }
        TableReportWriter.Write(rows, text);
    }
}
