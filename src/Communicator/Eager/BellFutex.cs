using System.Runtime.InteropServices;

namespace XCall.Communicator.Eager;

/// <summary>
/// FUTEX_WAIT / FUTEX_WAKE on a 32-bit word of a shared mapping (no FUTEX_PRIVATE_FLAG: the sleeper and the waker
/// are different processes). Supported on Linux x86-64 and arm64; elsewhere the eager path stays off.
/// </summary>
internal static unsafe partial class BellFutex
{
    private enum Operation
    {
        Wait = 0,
        Wake = 1,
    }

    /// <summary>The futex system call's number on this platform; -1 where the eager path does without.</summary>
    private static readonly long s_number = !OperatingSystem.IsLinux() ? -1
        : RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 202
        : RuntimeInformation.ProcessArchitecture == Architecture.Arm64 ? 98
        : -1;

    /// <summary>True when futex calls work here.</summary>
    public static bool IsSupported { get; } = s_number >= 0 && Probe();

    /// <summary>Sleeps while <c>*word == expected</c>, until woken or <paramref name="timeoutMs"/> passes; spurious returns are possible.</summary>
    public static void Wait(int* word, int expected, int timeoutMs)
    {
        long* timespec = stackalloc long[2];
        timespec[0] = timeoutMs / 1000;
        timespec[1] = timeoutMs % 1000 * 1_000_000L;
        _ = Syscall(s_number, word, (int)Operation.Wait, expected, timespec, null, 0);
    }

    /// <summary>Wakes every thread sleeping on <paramref name="word"/>, in any process.</summary>
    public static void WakeAll(int* word) => _ = Syscall(s_number, word, (int)Operation.Wake, int.MaxValue, null, null, 0);

    [LibraryImport("libc.so.6", EntryPoint = "syscall", SetLastError = true)] // glibc's real library ("libc.so" is a linker script)
    private static partial long Syscall(long number, void* address, int operation, int value, void* timeout, void* address2, int value3);

    /// <summary>Wakes nobody on a local word: whether the call is there and allowed.</summary>
    private static bool Probe()
    {
        int word = 0;
        try
        {
            return Syscall(s_number, &word, (int)Operation.Wake, 1, null, null, 0) >= 0;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }
}
