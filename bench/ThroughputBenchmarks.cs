using BenchmarkDotNet.Attributes;

namespace XCall.Bench;

/// <summary>
/// Throughput rows on the cross-process transports: a 1 MiB argument (a new array for the callee, a span it
/// copies into its own buffer, or a lent span it copies straight from the caller's array), one-way calls, and async calls
/// pipelined on one connection. Each benchmark operation is one call (OperationsPerInvoke for batches).
/// </summary>
[MemoryDiagnoser]
public class ThroughputBenchmarks
{
    public const int Batch = 1000;

    private RemoteService<IThroughput> _remote = null!;
    private IThroughput _target = null!;
    private readonly byte[] _big = new byte[1 << 20];
    private readonly Task<int>[] _tasks = new Task<int>[Batch];

    public static IEnumerable<string> Transports => BenchOptions.Current.Transports.Where(t => t is "shm" or "tcp");

    [ParamsSource(nameof(Transports))]
    public string Transport { get; set; } = "shm";

    [GlobalSetup]
    public void Setup()
    {
        _remote = Remote.Open<IThroughput>(RemoteServer.Shared(Transport).Address, RemoteServer.Options);
        _target = _remote.Proxy;
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _remote.Dispose();
    }

    [Benchmark(Description = "byte[1MiB]")]
    public int Big() => _target.TestBig(_big);

    [Benchmark(Description = "span[1MiB]")]
    public int Span() => _target.TestSpan(_big);

    [Benchmark(Description = "lent[1MiB]")]
    public int Lent() => _target.TestLent(_big);

    [Benchmark(Description = "oneway-batch", OperationsPerInvoke = Batch)]
    public long OneWay()
    {
        for (int i = 0; i < Batch; i++)
        {
            _target.TestOneWay(i);
        }
        return _target.OneWayCount();
    }

    [Benchmark(Description = "async-pipelined", OperationsPerInvoke = Batch)]
    public async Task<int> Pipelined()
    {
        for (int i = 0; i < Batch; i++)
        {
            _tasks[i] = _target.TestAsync(i);
        }
        int sum = 0;
        foreach (Task<int> t in _tasks)
        {
            sum += await t.ConfigureAwait(false);
        }
        return sum;
    }
}
