using System.Runtime.InteropServices;

namespace XCall.Transport;

/// <summary>
/// What the kernel says of one of this process's threads (64-bit Linux on x86-64 or arm64): its id, the CPU time it
/// has used and whether it is runnable. Elsewhere, or when a call fails, every answer is "unknown" (id 0, time -1,
/// state null) and callers keep their default.
/// </summary>
internal static unsafe partial class OsThreads
{
    private const int ClockSchedPerThread = 6; // CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD_MASK in the kernel's clock id encoding

    // gettid(2) through syscall(2): the libc wrapper is missing before glibc 2.30. -1: no thread ids here (and then no
    // CPU clocks either: a timespec of two 64-bit words holds only on these 64-bit targets).
    private static readonly long s_sysGetTid = OperatingSystem.IsLinux()
        ? RuntimeInformation.ProcessArchitecture switch
        {
            Architecture.X64 => 186,
            Architecture.Arm64 => 178,
            _ => -1,
        }
        : -1;

    /// <summary>The calling thread's kernel id; 0 where it cannot be had.</summary>
    public static int CurrentId()
    {
        if (s_sysGetTid < 0)
        {
            return 0;
        }
        try
        {
            long tid = Syscall(s_sysGetTid);
            return tid is > 0 and <= int.MaxValue ? (int)tid : 0;
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
        {
            return 0;
        }
    }

    /// <summary>The CPU time thread <paramref name="tid"/> of this process has used, in nanoseconds; -1 where it cannot
    /// be read. Exact for a thread on a CPU now (the kernel adds the running slice), unlike /proc's figures.</summary>
    public static long CpuTime(int tid)
    {
        if (tid <= 0 || s_sysGetTid < 0)
        {
            return -1;
        }
        long* timespec = stackalloc long[2];
        try
        {
            if (ClockGetTime((~tid << 3) | ClockSchedPerThread, timespec) != 0)
            {
                return -1;
            }
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
        {
            return -1;
        }
        return timespec[0] * 1_000_000_000L + timespec[1];
    }

    /// <summary>True when thread <paramref name="tid"/> of this process is runnable (on a CPU or waiting for one),
    /// false when it sleeps or waits on something, null where /proc cannot tell.</summary>
    public static bool? IsRunnable(int tid)
    {
        if (tid <= 0)
        {
            return null;
        }
        try
        {
            Span<byte> stat = stackalloc byte[512];
            using Microsoft.Win32.SafeHandles.SafeFileHandle file = File.OpenHandle($"/proc/self/task/{tid}/stat");
            int length = RandomAccess.Read(file, stat, 0);
            // "tid (comm) S ...": the name may hold spaces and parentheses, so the state follows the last ')'.
            int close = stat[..length].LastIndexOf((byte)')');
            if (close < 0 || close + 2 >= length)
            {
                return null;
            }
            return stat[close + 2] == (byte)'R';
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or NotSupportedException)
        {
            return null;
        }
    }

    [LibraryImport("libc", EntryPoint = "syscall")]
    private static partial long Syscall(long number);

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clockId, long* timespec);
}
