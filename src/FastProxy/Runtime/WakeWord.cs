using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using XCall.Transport;

namespace XCall.Runtime;

/// <summary>
/// A one-waiter sleep on a word of this process (a private futex on Linux): what a synchronous caller blocks on
/// while its reply is on the way, woken by the thread that completes its call. One system call a side and one
/// context switch for the sleeper, where a monitor's wait and pulse also take and re-take its lock.
/// </summary>
// Design:
// - The word lives in a pinned array (never moves), one per pooled call, so its address is fixed for the
//   call's life; only the call's owner sleeps on it, and any completer may wake it.
// - 0: nobody sleeps; 1: the owner is about to sleep or sleeps. The owner exchanges 1 in (a full fence) and then
//   reads the condition; a waker publishes the condition (with a full fence) and then exchanges 0 in, and calls
//   the kernel only when it read 1. A Dekker pair: either the owner sees the condition, or the waker sees 1; the
//   kernel's compare of the word against 1 closes the window between the owner's check and its sleep.
// - Where futexes are missing (not Linux on x86-64 or arm64) IsSupported is false and callers keep their monitor.
internal sealed unsafe class WakeWord
{
    private const int Asleep = 1;

    private readonly int[] _cell = GC.AllocateArray<int>(1, pinned: true);

    /// <summary>True when this process can sleep on a word (the caller uses its monitor otherwise).</summary>
    public static bool IsSupported => Futex.IsSupported;

    private int* Word => (int*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(_cell));

    /// <summary>The owner announces its sleep; it then checks its condition and either <see cref="Cancel"/>s or <see cref="Sleep"/>s.</summary>
    public void Prepare() => Interlocked.Exchange(ref _cell[0], Asleep);

    /// <summary>The owner found its condition met after <see cref="Prepare"/>: nobody needs to wake it.</summary>
    public void Cancel() => Volatile.Write(ref _cell[0], 0);

    /// <summary>The owner sleeps until woken, <paramref name="timeoutMs"/> passes (-1: no limit), or a spurious return;
    /// it then checks its condition again (and <see cref="Prepare"/>s before any further sleep).</summary>
    public void Sleep(int timeoutMs) => Futex.Wait(Word, Asleep, timeoutMs, processPrivate: true);

    /// <summary>A waker, after publishing the owner's condition with a full fence: true when the owner sleeps or is
    /// about to, and then this waker alone must <see cref="Signal"/> it.</summary>
    /// <remarks>The word no longer reads "asleep" after this, so an owner that has not yet gone to sleep returns at once:
    /// the <see cref="Signal"/> may come late (after the owner moved on and even sleeps again, which it then ends early:
    /// a spurious return, which the owner checks for).</remarks>
    public bool TakeSleeper() => Volatile.Read(ref _cell[0]) == Asleep && Interlocked.Exchange(ref _cell[0], 0) == Asleep;

    /// <summary>Wakes the owner that <see cref="TakeSleeper"/> found asleep.</summary>
    public void Signal() => Futex.Wake(Word, 1, processPrivate: true);
}
