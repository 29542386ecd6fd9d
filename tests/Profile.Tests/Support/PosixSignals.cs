using System.Runtime.InteropServices;

namespace XCall.Profile.Tests.Support;

/// <summary>Sends signals to child processes (.NET has no API for anything but kill).</summary>
internal static partial class PosixSignals
{
    private const int SigInt = 2;

    /// <summary>Sends SIGINT (what Ctrl+C sends) to <paramref name="pid"/>.</summary>
    public static void Interrupt(int pid)
    {
        if (Kill(pid, SigInt) != 0)
        {
            throw new InvalidOperationException($"kill({pid}, SIGINT) failed: errno {System.Runtime.InteropServices.Marshal.GetLastPInvokeError()}");
        }
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
