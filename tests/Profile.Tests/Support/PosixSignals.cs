using System.Runtime.InteropServices;

namespace XCall.Profile.Tests.Support;

/// <summary>Sends signals to child processes (.NET has no API for anything but kill).</summary>
internal static partial class PosixSignals
{
    private const int SigTerm = 15;

    /// <summary>Sends SIGTERM (what <c>kill</c> sends by default) to <paramref name="pid"/>.</summary>
    /// <remarks>
    /// Not SIGINT: a child inherits an ignored SIGINT (a test run started as a background job of a
    /// non-interactive shell has one), and .NET then leaves it ignored, so the signal would be lost.
    /// xcall-profile stops early on either signal in the same way.
    /// </remarks>
    public static void Terminate(int pid)
    {
        if (Kill(pid, SigTerm) != 0)
        {
            throw new InvalidOperationException($"kill({pid}, SIGTERM) failed: errno {System.Runtime.InteropServices.Marshal.GetLastPInvokeError()}");
        }
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
