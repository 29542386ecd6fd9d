namespace XCall.Bench;

/// <summary>Throughput rows: large arrays, one-way calls, pipelined async calls.</summary>
[Remotable]
public interface IThroughput
{
    /// <summary>Receives a large array (the <c>byte[1 MiB]</c> row).</summary>
    int TestBig(byte[] data);

    /// <summary>Receives a large block into the server's own buffer, as an MPI receive does (the <c>span[1MiB]</c> row).</summary>
    int TestSpan(ReadOnlySpan<byte> data);

    /// <summary>
    /// Receives a large block into the server's own buffer straight from the caller's array (the <c>lent[1MiB]</c>
    /// row): over shared memory with cross-memory attach, one copy, as MPI's single-copy receive.
    /// </summary>
    int TestLent(LentSpan<byte> data);

    /// <summary>A one-way call (the one-way calls-per-second row).</summary>
    [OneWay]
    void TestOneWay(int value);

    /// <summary>Returns how many one-way calls arrived; a sync call, so it also drains the one-way calls sent before it.</summary>
    long OneWayCount();

    /// <summary>An async call (the pipelined calls-per-second row).</summary>
    Task<int> TestAsync(int value);

    /// <summary>An async call returning a <see cref="ValueTask{TResult}"/> (<c>--loop shm pipelined-valuetask</c>).</summary>
    ValueTask<int> TestValueAsync(int value);
}

/// <summary>Implementation of <see cref="IThroughput"/>.</summary>
public sealed class ThroughputService : IThroughput
{
    private readonly byte[] _received = new byte[1 << 20];
    private long _oneWay;

    public int TestBig(byte[] data) => data.Length;

    public int TestSpan(ReadOnlySpan<byte> data)
    {
        // The bytes land in a buffer the server owns (the callee's side of the copy an MPI receive makes): the
        // span itself may point into the transport's memory and is gone when the call returns.
        data[..Math.Min(data.Length, _received.Length)].CopyTo(_received);
        return data.Length;
    }

    public int TestLent(LentSpan<byte> data)
    {
        // The same destination as TestSpan: here the copy into it is the only one.
        if (data.Length <= _received.Length)
        {
            data.CopyTo(_received);
        }
        return data.Length;
    }

    public void TestOneWay(int value) => Interlocked.Increment(ref _oneWay);

    public long OneWayCount() => Interlocked.Read(ref _oneWay);

    public Task<int> TestAsync(int value) => Task.FromResult(value + 1);

    public ValueTask<int> TestValueAsync(int value) => new(value + 1);
}
