namespace XCall.Channels;

/// <summary>
/// A CSP barrier: each enrolled process that syncs waits until every enrolled process has synced,
/// then all go on together and the barrier is ready for the next round.
/// </summary>
/// <remarks>With ImplicitUsings this name meets System.Threading.Barrier; alias it (<c>using Barrier = XCall.Channels.Barrier;</c>).</remarks>
public sealed class Barrier
{
    private readonly Lock _sync = new();
    private int _enrolled;
    private int _arrived;
    private TaskCompletionSource _round = NewRound();

    /// <summary>Creates a barrier with <paramref name="enrolled"/> processes enrolled.</summary>
    public Barrier(int enrolled = 0)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(enrolled);
        _enrolled = enrolled;
    }

    /// <summary>The number of processes enrolled.</summary>
    public int Enrolled
    {
        get
        {
            lock (_sync)
            {
                return _enrolled;
            }
        }
    }

    /// <summary>Enrolls one more process: rounds now wait for it too.</summary>
    public void Enroll()
    {
        lock (_sync)
        {
            _enrolled++;
        }
    }

    /// <summary>Resigns the calling process: rounds stop waiting for it; if it was the last one missing, the round ends.</summary>
    public void Resign()
    {
        TaskCompletionSource? ended = null;
        lock (_sync)
        {
            if (_enrolled == 0)
            {
                throw new InvalidOperationException("Resign with no process enrolled.");
            }
            _enrolled--;
            if (_arrived > 0 && _arrived == _enrolled)
            {
                ended = EndRoundUnsynchronized();
            }
        }
        ended?.SetResult();
    }

    /// <summary>Waits until every enrolled process has synced in this round.</summary>
    public Task SyncAsync()
    {
        TaskCompletionSource round;
        lock (_sync)
        {
            if (_arrived == _enrolled)
            {
                throw new InvalidOperationException("Sync by a process that is not enrolled.");
            }
            _arrived++;
            round = _round;
            if (_arrived < _enrolled)
            {
                return round.Task;
            }
            EndRoundUnsynchronized();
        }
        round.SetResult();
        return Task.CompletedTask;
    }

    /// <summary>Blocking form of <see cref="SyncAsync"/>.</summary>
    public void Sync() => Blocking.Wait(SyncAsync());

    private TaskCompletionSource EndRoundUnsynchronized()
    {
        TaskCompletionSource ended = _round;
        _round = NewRound();
        _arrived = 0;
        return ended;
    }

    // The waiters of a round resume on the pool, in parallel, not one after another on the last arriver's thread.
    private static TaskCompletionSource NewRound() => new(TaskCreationOptions.RunContinuationsAsynchronously);
}
