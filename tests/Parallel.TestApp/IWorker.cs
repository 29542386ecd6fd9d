namespace XCall.Parallel.TestApp;

/// <summary>The parallel object the test program places on its ranks.</summary>
[Remotable]
public interface IWorker
{
    /// <summary>Appends <paramref name="value"/>.</summary>
    [OneWay]
    void Append(int value);

    /// <summary>Throws with <paramref name="message"/>.</summary>
    [OneWay]
    void Fail(string message);

    /// <summary>Ends this worker's process with SIGKILL.</summary>
    [OneWay]
    void Die();

    /// <summary>How many values came, or -1 when they did not come in order.</summary>
    int InOrder();

    /// <summary>The rank that hosts this object.</summary>
    int HostRank();
}

/// <summary>The object behind <see cref="IWorker"/>.</summary>
internal sealed class Worker(Func<int> rank) : IWorker
{
    private int _count;
    private bool _ordered = true;

    public void Append(int value)
    {
        _ordered &= value == _count;
        _count++;
    }

    public void Fail(string message) => throw new InvalidOperationException(message);

    public void Die()
    {
        using var kill = System.Diagnostics.Process.Start("kill", ["-9", Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        kill.WaitForExit();
    }

    public int InOrder() => _ordered ? _count : -1;

    public int HostRank() => rank();
}

/// <summary>A parallel object whose calls take long: too coarse to agglomerate.</summary>
[Remotable]
public interface ISpinner
{
    /// <summary>Spins for <paramref name="microseconds"/>.</summary>
    [OneWay]
    void Spin(int microseconds);

    /// <summary>How many spins ran.</summary>
    int Count();

    /// <summary>The rank that hosts this object.</summary>
    int HostRank();
}

/// <summary>The object behind <see cref="ISpinner"/>.</summary>
internal sealed class Spinner(Func<int> rank) : ISpinner
{
    private int _count;

    public void Spin(int microseconds)
    {
        var watch = System.Diagnostics.Stopwatch.StartNew();
        while (watch.Elapsed.TotalMicroseconds < microseconds)
        {
            Thread.SpinWait(1);
        }
        _count++;
    }

    public int Count() => _count;

    public int HostRank() => rank();
}

/// <summary>Every object on the rank after the caller's: a creation in this process is the object manager's choice.</summary>
internal sealed class OtherRankPlacement : PlacementPolicy
{
    public override ValueTask<int> PlaceAsync(PlacementContext context, CancellationToken cancellationToken) =>
        ValueTask.FromResult((context.Rank + 1) % context.Size);
}
