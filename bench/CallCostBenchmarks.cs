using System.Reflection;
using BenchmarkDotNet.Attributes;
using XCall.Domain;

namespace XCall.Bench;

/// <summary>
/// One benchmark method per signature; <see cref="Transport"/> selects how the call travels. Each
/// operation is one call. The reference (<c>loc</c>) is a plain local interface call of <c>void Test(int)</c>.
/// </summary>
[MemoryDiagnoser]
public class CallCostBenchmarks
{
    private ICallCost _target = null!;
    private DomainHost? _domain;
    private RemoteServer? _server;
    private RemoteService<ICallCost>? _remote;
    private readonly Data _data = new() { p = 1 };
    private readonly byte[] _bytes = new byte[1000];
    private const string Text = "hola";
    private readonly int[] _ints = new int[1_000_000];
    private readonly Vector _vector = new() { X = 1, Y = 2, Z = 3, Id = 4 };
    private readonly TreeNode _tree = CallCostService.Tree(100);

    public static IEnumerable<string> Transports => BenchOptions.Current.Transports;

    [ParamsSource(nameof(Transports))]
    public string Transport { get; set; } = "direct";

    [GlobalSetup]
    public void Setup()
    {
        _bytes[^1] = 1;
        _target = Transport switch
        {
            "direct" => new DerivedCallCostService(),
            "domain" => CreateDomain(),
            "shm" or "tcp" => CreateRemote(),
            _ => throw new InvalidOperationException($"Unknown transport {Transport}."),
        };
        _target.Test(1);
    }

    private ICallCost CreateDomain()
    {
        string directory = typeof(CallCostBenchmarks).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Single(a => a.Key == "DomainServiceDirectory").Value!;
        _domain = DomainHost.Load(Path.Combine(directory, "XCall.Bench.Service.dll"), "bench");
        return _domain.Create<ICallCost>();
    }

    private ICallCost CreateRemote()
    {
        _server = RemoteServer.Start(Transport);
        _remote = Remote.Open<ICallCost>(_server.Address, RemoteServer.Options);
        return _remote.Proxy;
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _domain?.Dispose();
        _remote?.Dispose();
        _server?.Dispose();
    }

    [Benchmark(Description = "int")]
    public void Int() => _target.Test(42);

    [Benchmark(Description = "virt")]
    public void Virt() => _target.TestVirt(42);

    [Benchmark(Description = "data")]
    public void DataCall() => _target.TestData(_data);

    [Benchmark(Description = "str")]
    public void Str() => _target.TestString(Text);

    [Benchmark(Description = "byte")]
    public void Bytes() => _target.TestBytes(_bytes);

    [Benchmark(Description = "int[1M]")]
    public void Ints() => _target.TestInts(_ints);

    [Benchmark(Description = "struct")]
    public void Struct() => _target.TestStruct(_vector);

    [Benchmark(Description = "ref/out")]
    public int RefOut()
    {
        int value = 20;
        _target.TestRefOut(ref value, out int doubled);
        return value + doubled;
    }

    [Benchmark(Description = "Task<int>")]
    public Task<int> TaskOfInt() => _target.TestTask(42);

    [Benchmark(Description = "oneway")]
    public void OneWay() => _target.TestOneWay(1);

    [Benchmark(Description = "graph100")]
    public void Graph() => _target.TestGraph(_tree);
}

/// <summary>The reference row: a plain local interface call of <c>void Test(int)</c>.</summary>
[MemoryDiagnoser]
public class LocalCallBenchmark
{
    private readonly ICallCost _target = new DerivedCallCostService();

    [Benchmark(Baseline = true, Description = "loc")]
    public void Loc() => _target.Test(42);
}
