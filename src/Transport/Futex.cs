using System.Runtime.InteropServices;

namespace XCall.Transport;

/// <summary>
/// FUTEX_WAIT / FUTEX_WAKE on a 32-bit word: the one wrapper of the system call for every layer that sleeps on a
/// word. Shared (the default) where the word lives in a shared segment and the waiter and the waker may be in
/// different processes; <c>processPrivate</c> where both are in this process, which spares the kernel the
/// lookup of the memory mapping.
/// </summary>
public static unsafe partial class Futex
{
    private const int FutexWait = 0;
    private const int FutexWake = 1;
    private const int FutexPrivateFlag = 128;

    private static readonly long s_sysFutex = OperatingSystem.IsLinux()
        ? RuntimeInformation.ProcessArchitecture switch
        {
            Architecture.X64 => 202,
            Architecture.Arm64 => 98,
            _ => -1,
        }
        : -1;

    /// <summary>True when futex calls work here (Linux on x86-64 or arm64, and not filtered out).</summary>
    public static bool IsSupported { get; } = Probe();

    /// <summary>Sleeps while <c>*word == expected</c>, until woken or <paramref name="timeoutMs"/> passes
    /// (-1: no timeout). Returns at once if the word already differs; spurious returns are possible.</summary>
    public static void Wait(int* word, int expected, int timeoutMs, bool processPrivate = false)
    {
        int operation = processPrivate ? FutexWait | FutexPrivateFlag : FutexWait;
        if (timeoutMs < 0)
        {
            Syscall(s_sysFutex, word, operation, expected, null, null, 0);
            return;
        }
        long* timespec = stackalloc long[2];
        timespec[0] = timeoutMs / 1000;
        timespec[1] = timeoutMs % 1000 * 1_000_000L;
        Syscall(s_sysFutex, word, operation, expected, timespec, null, 0);
    }

    /// <summary>Wakes up to <paramref name="count"/> threads sleeping on <paramref name="word"/> (in any process,
    /// unless <paramref name="processPrivate"/>, which must match the sleepers' own flag).</summary>
    public static void Wake(int* word, int count, bool processPrivate = false) =>
        Syscall(s_sysFutex, word, processPrivate ? FutexWake | FutexPrivateFlag : FutexWake, count, null, null, 0);

    private static bool Probe()
    {
        if (s_sysFutex < 0)
        {
            return false;
        }
        try
        {
            int word = 0;
            return Syscall(s_sysFutex, &word, FutexWake, 1, null, null, 0) >= 0;
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }

    [LibraryImport("libc", EntryPoint = "syscall")]
    private static partial long Syscall(long number, void* address, int operation, int value, void* timeout, void* address2, int value3);
}
