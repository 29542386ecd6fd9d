namespace XCall.Profile;

/// <summary>A failure to report to the user as one line, with the exit code it ends the tool with.</summary>
internal sealed class ProfileException : Exception
{
    /// <summary>Creates the exception.</summary>
    public ProfileException(int exitCode, string message, Exception? innerException = null)
        : base(message, innerException) => ExitCode = exitCode;

    /// <summary>One of <see cref="ExitCodes"/>.</summary>
    public int ExitCode { get; }
}
