namespace XCall.Tests.Contracts;

/// <summary>Standing requests answered when the test says so (<see cref="LongWaitAttribute"/>), beside a plain call.</summary>
[Remotable]
public interface ILongWaits
{
    [LongWait]
    Task<int> NextAsync(int after);

    [LongWait]
    ValueTask FailAsync(CancellationToken cancellationToken);

    int Echo(int value);

    /// <summary>As <see cref="NextAsync"/>, without the mark.</summary>
    Task<int> HeldAsync();

    /// <summary>Calls <paramref name="back"/> before it returns (a callback made while serving a long wait).</summary>
    [LongWait]
    Task<int> CallBackAsync(ILongWaitsCallback back);
}

/// <summary>What <see cref="ILongWaits.CallBackAsync"/> calls back.</summary>
[Remotable]
public interface ILongWaitsCallback
{
    int Add(int a, int b);
}
