namespace XCall.Profile;

/// <summary>The exit codes of <c>xcall-profile</c>, listed in its help text.</summary>
internal static class ExitCodes
{
    /// <summary>The command did what was asked.</summary>
    public const int Success = 0;

    /// <summary>The command line was not understood.</summary>
    public const int Usage = 1;

    /// <summary>No process has the given pid.</summary>
    public const int NoSuchProcess = 2;

    /// <summary>The session worked but the process made no XCall call while it ran.</summary>
    public const int NoCalls = 3;

    /// <summary>The process has no .NET diagnostic endpoint (not .NET, diagnostics disabled, other user or TMPDIR).</summary>
    public const int NotDotNet = 4;

    /// <summary>The EventPipe session could not be started or broke.</summary>
    public const int SessionFailed = 5;
}
