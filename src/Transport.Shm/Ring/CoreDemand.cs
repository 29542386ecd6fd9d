using System.Globalization;
using Microsoft.Win32.SafeHandles;

namespace XCall.Transport.Shm.Ring;

// Design: how many threads want this machine's cores, for the waits that spin (IdleSpinner, the communicator's eager
// inbox through CoreLoad). Spinning pays only while the thread that will end the wait (the peer's) has a core: when
// more threads are runnable than there are cores, a spinning waiter may hold the very core its peer waits for, and a
// 1 µs reply becomes a time slice. The transport's callers ask with a whole thread of slack (OversubscribedByAThread);
// its receive threads (see IdleSpinner) and CoreLoad ask with half a thread (Oversubscribed).
// - The figure is the kernel's count of runnable threads (the first number of /proc/loadavg's fourth field, counted
//   when it is read; it includes the spinners themselves), smoothed over the last few samples, so one passing
//   thread does not turn spinning off.
// - Sampled at most once per SampleIntervalMs, by whichever waiter finds the sample stale and wins the exchange
//   on s_nextSampleAt; the others use the previous figure. One pread of a file kept open: no allocation.
// - Read only by waits that already spun ProbeTurn turns without their work arriving (IdleSpinner), so a
//   reply that comes at once never pays for it.
// - Where /proc/loadavg cannot be read (not Linux), the figure stays 0: spinning is bounded only by what the
//   spinners learn (SpinTuner).
// - Tests force the answer with ForceOversubscribed; it changes when threads sleep, never what they deliver.

/// <summary>Whether more threads want this machine's cores than it has (then waits stop spinning early).</summary>
internal static class CoreDemand
{
    private const int SampleIntervalMs = 2;

    private static readonly SafeFileHandle? s_loadavg = OpenLoadAverage();
    private static readonly int s_cores = Environment.ProcessorCount;
    private static long s_nextSampleAt;
    private static int s_runnableX4; // runnable threads, times 4, averaged: new = (3 * old + 4 * sample) / 4
    private static int s_force; // tests: 1 oversubscribed by a thread, 2 by half a thread only, -1 not, 0 measured

    /// <summary>
    /// True when, on average over the last samples, more threads were runnable than there are cores (half a thread
    /// of slack, so that a peer just woken does not count against the spinners). What <see cref="CoreLoad"/> answers
    /// the layers that spin on shared memory of their own.
    /// </summary>
    public static bool Oversubscribed => RunnableX4Beyond(2, forcedAt: 2);

    /// <summary>
    /// True when, on average over the last samples, more than one thread beyond the cores was runnable: what the
    /// transport's callers ask. A whole thread of slack: a caller and its peer's receive thread can fill two cores
    /// with their spinning, and a thread that passes through (a timer, a heartbeat, a pool thread) must not send them
    /// to sleep, which costs a wake-up of tens of microseconds where the answer was a microsecond away; threads that
    /// keep wanting a core still do.
    /// </summary>
    public static bool OversubscribedByAThread => RunnableX4Beyond(4, forcedAt: 1);

    /// <summary><paramref name="forcedAt"/>: the highest forced state (<see cref="ForceOversubscribed"/>) that answers true.</summary>
    private static bool RunnableX4Beyond(int slackX4, int forcedAt)
    {
        int force = Volatile.Read(ref s_force);
        if (force != 0)
        {
            return force > 0 && force <= forcedAt;
        }
        long now = Environment.TickCount64;
        long next = Volatile.Read(ref s_nextSampleAt);
        if (now >= next && s_loadavg is not null && Interlocked.CompareExchange(ref s_nextSampleAt, now + SampleIntervalMs, next) == next)
        {
            Sample();
        }
        return Volatile.Read(ref s_runnableX4) > (4 * s_cores) + slackX4;
    }

    /// <summary>The smoothed count of runnable threads (tests and diagnostics).</summary>
    public static double Runnable => Volatile.Read(ref s_runnableX4) / 4.0;

    /// <summary>
    /// Tests: makes <see cref="Oversubscribed"/> and <see cref="OversubscribedByAThread"/> answer
    /// <paramref name="value"/>, or measure again (null); with <paramref name="byAThread"/> false, a true
    /// <paramref name="value"/> holds for <see cref="Oversubscribed"/> only (half a thread beyond the cores).
    /// </summary>
    internal static void ForceOversubscribed(bool? value, bool byAThread = true) =>
        Volatile.Write(ref s_force, value switch { true => byAThread ? 1 : 2, false => -1, null => 0 });

    private static void Sample()
    {
        Span<byte> text = stackalloc byte[128];
        int runnable;
        try
        {
            int length = RandomAccess.Read(s_loadavg!, text, 0);
            if (!TryParseRunnable(text[..length], out runnable))
            {
                return;
            }
        }
        catch (IOException)
        {
            return;
        }
        int old = Volatile.Read(ref s_runnableX4);
        Volatile.Write(ref s_runnableX4, ((3 * old) + (4 * runnable)) / 4);
    }

    /// <summary>The runnable count in /proc/loadavg's text ("0.52 0.58 0.59 3/467 12345": 3).</summary>
    internal static bool TryParseRunnable(ReadOnlySpan<byte> text, out int runnable)
    {
        runnable = 0;
        int field = 0;
        int i = 0;
        while (i < text.Length && field < 3)
        {
            if (text[i++] == (byte)' ')
            {
                field++;
            }
        }
        int slash = text[i..].IndexOf((byte)'/');
        return field == 3 && slash > 0 && int.TryParse(text.Slice(i, slash), NumberStyles.None, CultureInfo.InvariantCulture, out runnable);
    }

    private static SafeFileHandle? OpenLoadAverage()
    {
        if (!OperatingSystem.IsLinux())
        {
            return null;
        }
        try
        {
            return File.OpenHandle("/proc/loadavg", FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
