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
