namespace XCall.Channels;

/// <summary>
/// A clock in milliseconds and, as a guard, an alarm: ready once the time set by
/// <see cref="AbsoluteTimeout"/> or <see cref="RelativeTimeout(TimeSpan)"/> has come. (Named after
/// JCSP's and CSP.NET's CSTimer; "Timer" would clash with System.Threading.Timer.)
/// </summary>
/// <remarks>One Alternative uses a timer at a time, as in JCSP.</remarks>
public sealed class CSTimer : Guard
{
    private readonly TimeProvider _time;
    private long _alarm = long.MaxValue;
    private ITimer? _pending;

    /// <summary>Creates a timer on the system clock.</summary>
    public CSTimer()
        : this(TimeProvider.System)
    {
    }

    /// <summary>Creates a timer on <paramref name="time"/> (tests pass a fake clock).</summary>
    public CSTimer(TimeProvider time) => _time = time;

    /// <summary>Milliseconds on a monotonic clock; the scale <see cref="AbsoluteTimeout"/> takes.</summary>
    public long Now => (long)_time.GetElapsedTime(0, _time.GetTimestamp()).TotalMilliseconds;

    /// <summary>The time, on the <see cref="Now"/> scale, at which the guard becomes ready.</summary>
    public long Alarm => Volatile.Read(ref _alarm);

    /// <summary>Sets the alarm to an absolute time on the <see cref="Now"/> scale.</summary>
    public void AbsoluteTimeout(long alarm) => Volatile.Write(ref _alarm, alarm);

    /// <summary>Sets the alarm <paramref name="delay"/> from now.</summary>
    public void RelativeTimeout(TimeSpan delay) => AbsoluteTimeout(Now + (long)Math.Ceiling(delay.TotalMilliseconds));

    /// <summary>Sets the alarm <paramref name="milliseconds"/> from now.</summary>
    public void RelativeTimeout(long milliseconds) => AbsoluteTimeout(Now + milliseconds);

    /// <summary>Waits until <paramref name="alarm"/> on the <see cref="Now"/> scale.</summary>
    public Task SleepUntilAsync(long alarm, CancellationToken cancellationToken = default)
    {
        long wait = alarm - Now;
        return wait <= 0 ? Task.CompletedTask : Task.Delay(TimeSpan.FromMilliseconds(wait), _time, cancellationToken);
    }

    private bool Expired => Now >= Volatile.Read(ref _alarm);

    internal override bool Poll() => Expired;

    internal override bool Enable(Alternative alternative)
    {
        long wait = Volatile.Read(ref _alarm) - Now;
        if (wait <= 0)
        {
            return true;
        }
        _pending = _time.CreateTimer(static s => ((Alternative)s!).Notify(), alternative, TimeSpan.FromMilliseconds(wait), Timeout.InfiniteTimeSpan);
        return false;
    }

    internal override bool Disable(Alternative alternative)
    {
        _pending?.Dispose();
        _pending = null;
        return Expired;
    }
}
