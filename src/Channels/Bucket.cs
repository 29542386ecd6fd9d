namespace XCall.Channels;

/// <summary>
/// A CSP bucket: processes fall into it and wait until another process flushes it, which releases
/// everyone in it at once.
/// </summary>
public sealed class Bucket
{
    private readonly Lock _sync = new();
    private int _holding;
    private TaskCompletionSource _fill = NewFill();

    /// <summary>How many processes wait in the bucket now.</summary>
    public int Holding
    {
        get
        {
            lock (_sync)
            {
                return _holding;
            }
        }
    }

    /// <summary>Waits in the bucket until the next <see cref="Flush"/>.</summary>
    public Task FallIntoAsync()
    {
        lock (_sync)
        {
            _holding++;
            return _fill.Task;
        }
    }

    /// <summary>Blocking form of <see cref="FallIntoAsync"/>.</summary>
    public void FallInto() => Blocking.Wait(FallIntoAsync());

    /// <summary>Releases every process in the bucket and returns how many there were.</summary>
    public int Flush()
    {
        TaskCompletionSource released;
        int count;
        lock (_sync)
        {
            released = _fill;
            count = _holding;
            _fill = NewFill();
            _holding = 0;
        }
        released.SetResult();
        return count;
    }

    private static TaskCompletionSource NewFill() => new(TaskCreationOptions.RunContinuationsAsynchronously);
}
