using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;

namespace XCall.Transport.Shm.Ring;

/// <summary>
/// Counts the idle turns of a waiting thread and says when it has spun (pause) and yielded long enough to
/// go to sleep, per <see cref="ShmIdleStrategy"/>.
/// </summary>
internal struct IdleSpinner
{
    // One turn is one CPU pause: 3,000 of them are enough spinning to catch a reply to a short call without
    // a sleep; the yields give the core to a runnable thread of the peer on a machine with few cores.
    private const int AdaptiveSpins = 3000;
    private const int AdaptiveYields = 40;
    private const int BlockingSpins = 100;
    private const int BlockingYields = 2;

    private int _count;

    /// <summary>Starts over after the thread found work.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Reset() => _count = 0;

    /// <summary>Spends one idle turn; false when the thread should sleep instead.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool SpinOnce(ShmIdleStrategy strategy)
    {
        int n = _count;
        if (strategy == ShmIdleStrategy.BusySpin)
        {
            Pause();
            return true;
        }
        (int spins, int yields) = strategy == ShmIdleStrategy.Blocking ? (BlockingSpins, BlockingYields) : (AdaptiveSpins, AdaptiveYields);
        if (n < spins)
        {
            _count = n + 1;
            Pause();
            return true;
        }
        if (n < spins + yields)
        {
            _count = n + 1;
            Thread.Yield();
            return true;
        }
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
