namespace XCall.Profile;

/// <summary>The usage texts printed by <c>--help</c>.</summary>
internal static class HelpText
{
    /// <summary>The exit codes, shared by every command's help.</summary>
    public const string ExitCodeList = """
        Exit codes:
          0  success
          1  the command line was not understood
          2  no process with that pid
          3  the process made no XCall calls while the session ran
          4  the process is not a .NET process (no diagnostic endpoint)
          5  the EventPipe session could not be started or broke
        """;

    /// <summary>Overview of the tool.</summary>
    public const string Main = $"""
        xcall-profile: where XCall calls spend their time, per contract, method and side, read from a running
        .NET process over EventPipe (the process needs no change: XCall writes the events when asked).

        Usage:
          xcall-profile ps                                    list .NET processes; * marks those using XCall
          xcall-profile collect --pid N [--duration 10s] [--format table|json|csv]
                                                              collect for a while, then print a report
          xcall-profile monitor --pid N [--interval 1s]       live view, refreshed every interval
          xcall-profile <command> --help                      details of a command

        Only processes of the same user with the same TMPDIR can be attached to.

        {ExitCodeList}
        """;

    /// <summary>Help of <c>ps</c>.</summary>
    public const string Ps = $"""
        xcall-profile ps

        Lists the .NET processes this user can attach to: pid, XCall mark, name and command line. A * in
        the XCALL column means the process has loaded XCall.FastProxy.dll; ? means it could not be told.

        {ExitCodeList}
        """;

    /// <summary>Help of <c>collect</c>.</summary>
    public const string Collect = $"""
        xcall-profile collect --pid N [--duration 10s] [--format table|json|csv]

        Enables XCall's call events (EventSource "XCall", keyword 1) in process N for the duration
        (500ms, 10s, 1m; default 10s; Ctrl+C or SIGTERM stops early; a background job of a script
        ignores SIGINT, so stop it with kill's default SIGTERM) and prints one row per contract, method and side,
        the highest total cost first:
          calls, failed          calls seen (one per side that was traced) and how many failed
          marshal mean/p50/p99   time writing arguments and reading results (client), or reading
                                 arguments and writing results (server), in microseconds
          req B / reply B        mean argument and result payload bytes per call
          transport              client only: mean time from sending the request to having the reply
          target                 server only: mean time in the target method
          total                  sum of marshal + transport + target time over all the calls, in µs
        JSON and CSV carry the same columns; JSON wraps them as {"{"}"pid", "durationSeconds", "totalCalls",
        "methods": [...]{"}"}. Progress goes to stderr, the report to stdout.

        {ExitCodeList}
        """;

    /// <summary>Help of <c>monitor</c>.</summary>
    public const string Monitor = $"""
        xcall-profile monitor --pid N [--interval 1s]

        Shows the same rows as collect, redrawn every interval: the calls of the last interval and the
        totals since the start. Runs until Ctrl+C or until the process exits.

        {ExitCodeList}
        """;
}
