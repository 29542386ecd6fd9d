using System.Runtime.InteropServices;

namespace XCall.Transport.Shm.Interop;

/// <summary>
/// FUTEX_WAIT / FUTEX_WAKE on a 32-bit word, without FUTEX_PRIVATE_FLAG: the word lives in a shared
/// segment and the waiter and the waker are in different processes. Public for the layers that keep shared
/// memory of their own (the communicator's eager inbox), so the system call has one wrapper.
/// </summary>
public static unsafe class Futex
{
    private const int FutexWait = 0;
    private const int FutexWake = 1;

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
    public static void Wait(int* word, int expected, int timeoutMs)
    {
        if (timeoutMs < 0)
        {
            Libc.Syscall(s_sysFutex, word, FutexWait, expected, null, null, 0);
            return;
        }
        long* timespec = stackalloc long[2];
        timespec[0] = timeoutMs / 1000;
        timespec[1] = timeoutMs % 1000 * 1_000_000L;
        Libc.Syscall(s_sysFutex, word, FutexWait, expected, timespec, null, 0);
    }

    /// <summary>Wakes up to <paramref name="count"/> threads sleeping on <paramref name="word"/>, in any process.</summary>
    public static void Wake(int* word, int count) => Libc.Syscall(s_sysFutex, word, FutexWake, count, null, null, 0);

    private static bool Probe()
    {
        if (s_sysFutex < 0)
        {
            return false;
        }
        try
        {
            int word = 0;
            return Libc.Syscall(s_sysFutex, &word, FutexWake, 1, null, null, 0) >= 0;
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }
}
