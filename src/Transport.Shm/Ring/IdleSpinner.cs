using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;

namespace XCall.Transport.Shm.Ring;

// Design: one wait's idle turns, spin -> yield -> (the caller) sleep, per ShmIdleStrategy.
// - A wait's budget is fixed at its first turn: Adaptive spins what its SpinTuner allows (Ceiling without one),
//   Blocking a short fixed count; then a few yields, which cost nothing where no other thread wants the core.
// - At turn ProbeTurn (or at the end of a shorter spin), a wait still without work may ask CoreDemand how many
//   threads want the cores (SpinCut): a writer waiting for room asks whether more than one thread beyond the cores
//   is runnable (OversubscribedByAThread). If so it stops at once, with no yields: its peer may be one of the
//   threads waiting for a core (yields would hand each of them a time slice before it), and the caller's sleep
//   costs one wake-up instead. A wait whose work comes within ProbeTurn turns never asks.
// - A wait that gives way (the receive thread's) asks with half a thread of slack (Oversubscribed): a receive
//   thread woken while its process's callers poll for their own frames (a reader between two channel operations)
//   would otherwise spin its whole budget on the core one of them needs, often the one it preempted to run.
// - A synchronous caller waiting for its reply never asks: its thread has nothing else to do, its peer is at work on
//   the call, and whenever both run at once (as two threads among others on the cores do, slice after slice) the
//   reply comes within the spin or a yield hands the core to the peer; cut short, every call would pay a wake-up of
//   each side, each one waiting for the scheduler to preempt whatever runs. Its learned budget and the yields after
//   it still bound what it spins (docs/benchmarks.md, "A caller's wait is not cut"). An asynchronous call's wait asks
//   as a writer's does: its thread has other work, and the call goes on asynchronously.
// - What a wait learns goes to its tuner: work found after n turns (Reset), or the whole budget spent (the turn
//   that returns false); a wait cut short by CoreDemand teaches nothing.
// - A wait whose peer is itself a waiting thread that spins (a channel operation's wait for any frame, an asynchronous
//   call's poll) yields once every YieldEvery pauses of a long spin (yieldsAmidSpin), unless more threads want the
//   cores than there are (CoreDemand.Oversubscribed). Two such threads can share one core while the other idles: each
//   then spins its whole budget before the other runs and sends what it waits for, frame after frame, until the
//   scheduler's balancer moves one of them, milliseconds later (docs/benchmarks.md, "Two spinners on one core"). Where
//   nothing else wants the core the yield returns at once; where foreign work does, it would hand that work a time
//   slice, so the spin goes on unbroken as before. A synchronous caller's wait and the receive thread's do not yield
//   amid their spin: with them yielding too, the int call under a busy-loop load lost more than these waits gained.
// - BusySpin never yields, sleeps or asks.

/// <summary>
/// Counts the idle turns of a waiting thread and says when it has spun (pause) and yielded long enough to
/// go to sleep, per <see cref="ShmIdleStrategy"/>, the cores' demand (<see cref="CoreDemand"/>) and what its
/// site learned (<see cref="SpinTuner"/>).
/// </summary>
internal struct IdleSpinner
{
    /// <summary>The turn at which a wait still without work checks whether the cores are oversubscribed.</summary>
    public const int ProbeTurn = 64;

    private const int AdaptiveYields = 40;

    /// <summary>The pauses between two yields amid a long spin (a power of two; see the design notes).</summary>
    public const int YieldEvery = 256;

    /// <summary>The yields of a caller waiting while another thread reads its reply, before it blocks (ShmChannel).</summary>
    public const int BesideReaderYields = AdaptiveYields;
    private const int BlockingSpins = 100;
    private const int BlockingYields = 2;

    private readonly SpinTuner? _tuner;
    private readonly SpinCut _cut;
    private readonly bool _yieldsAmidSpin;
    private int _count;
    private int _spinEnd;
    private int _yieldEnd;
    private int _probeAt;
    private bool _wasCut;

    /// <summary>A spinner that reports to <paramref name="tuner"/> and spins what it allows, cut short on busy cores as
    /// <paramref name="cut"/> says; <paramref name="yieldsAmidSpin"/>: a wait whose peer spins too, which yields now and
    /// then during a long spin (see the design notes).</summary>
    public IdleSpinner(SpinTuner? tuner, SpinCut cut = SpinCut.ByAThread, bool yieldsAmidSpin = false)
    {
        _tuner = tuner;
        _cut = cut;
        _yieldsAmidSpin = yieldsAmidSpin;
    }

    /// <summary>Starts over after the thread found work.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Reset()
    {
        if (_count != 0)
        {
            if (!_wasCut && _count < _yieldEnd)
            {
                _tuner?.Found(_count);
            }
            _count = 0;
        }
    }

    /// <summary>Starts over after the thread slept (the wait's outcome was already reported).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Restart() => _count = 0;

    /// <summary>Whether the last wait was cut short because the cores were oversubscribed (tests).</summary>
    public readonly bool WasCut => _wasCut;

    /// <summary>The yields made amid a spin by this thread's waits so far (tests; a count off the spinner struct, which
    /// the hot loops carry).</summary>
    public static int YieldsAmidSpinOnThisThread => t_yieldsAmidSpin;

    [ThreadStatic]
    private static int t_yieldsAmidSpin;

    /// <summary>Spends one idle turn; false when the thread should sleep instead.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool SpinOnce(ShmIdleStrategy strategy)
    {
        if (strategy == ShmIdleStrategy.BusySpin)
        {
            Pause();
            return true;
        }
        int n = _count;
        if (n == 0)
        {
            Begin(strategy);
        }
        if (n == _probeAt && (_cut == SpinCut.ByHalfAThread ? CoreDemand.Oversubscribed : CoreDemand.OversubscribedByAThread))
        {
            return Cut();
        }
        if (n < _spinEnd)
        {
            _count = n + 1;
            if (_yieldsAmidSpin && n != 0 && (n & (YieldEvery - 1)) == 0)
            {
                YieldAmidSpin();
            }
            else
            {
                Pause();
            }
            return true;
        }
        if (n < _yieldEnd)
        {
            _count = n + 1;
            Thread.Yield();
            return true;
        }
        if (n == _yieldEnd)
        {
            _count = n + 1; // report once per wait
            _tuner?.Exhausted();
        }
        return false;
    }

    private void Begin(ShmIdleStrategy strategy)
    {
        bool blocking = strategy == ShmIdleStrategy.Blocking;
        _spinEnd = blocking ? BlockingSpins : _tuner?.Limit ?? SpinTuner.Ceiling;
        _yieldEnd = _spinEnd + (blocking ? BlockingYields : AdaptiveYields);
        _probeAt = _cut == SpinCut.Never ? -1 : Math.Min(ProbeTurn, _spinEnd);
        _wasCut = false;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void YieldAmidSpin()
    {
        if (CoreDemand.Oversubscribed)
        {
            Pause();
            return;
        }
        t_yieldsAmidSpin++;
        Thread.Yield();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool Cut()
    {
        _wasCut = true;
        _count = _yieldEnd + 1; // past the end: the next turns answer false too, and nothing is reported
        return false;
    }

    /// <summary>
    /// One CPU pause: the instruction itself where the JIT exposes it, so a polling turn costs no call into
    /// the runtime (Thread.SpinWait is one, plus its normalization).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Pause()
    {
        if (X86Base.IsSupported)
        {
            X86Base.Pause();
        }
        else if (ArmBase.IsSupported)
        {
            ArmBase.Yield();
        }
        else
        {
            Thread.SpinWait(1);
        }
    }
}

/// <summary>When the cores' demand (<see cref="CoreDemand"/>) cuts a wait's spin short (IdleSpinner's design notes).</summary>
internal enum SpinCut
{
    /// <summary>When more than one thread beyond the cores is runnable (a writer waiting for room).</summary>
    ByAThread,

    /// <summary>When half a thread beyond the cores is (the receive thread, which gives way).</summary>
    ByHalfAThread,

    /// <summary>Never (a synchronous caller waiting for its reply).</summary>
    Never,
}
