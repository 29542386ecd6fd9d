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
}
