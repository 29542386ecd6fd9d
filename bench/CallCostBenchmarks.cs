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
    /// <summary>Calls per benchmark invocation: amortises the harness's own overhead, which is as large as a local call.</summary>
    public const int Calls = 16;

    private ICallCost _target = null!;
    private DomainHost? _domain;
    private RemoteService<ICallCost>? _remote;
    private RemoteService<ICallCost>? _callbackRemote;
    private ICallCost? _callbackTarget;
    private readonly Data _data = new() { p = 1 };
    private readonly byte[] _bytes = new byte[1000];
    private const string Text = "hola";
    private readonly int[] _ints = new int[1_000_000];
    private readonly Vector _vector = new() { X = 1, Y = 2, Z = 3, Id = 4 };
    private readonly TreeNode _tree = CallCostService.Tree(100);
    private readonly ICallSink _sinkObject = new CallSink();

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

    private RemoteServer? _callbackServer;

    /// <summary>
    /// The callback row's own server (concurrent dispatch), started on the row's first call and stopped
    /// with it, so its threads never compete with the other rows on two cores.
    /// </summary>
    private ICallCost CallbackTarget()
    {
        if (_callbackTarget is null)
        {
            if (Transport is "shm" or "tcp")
            {
                _callbackServer = RemoteServer.Start(Transport, concurrent: true);
                _callbackRemote = Remote.Open<ICallCost>(_callbackServer.Address, RemoteServer.Options);
                _callbackTarget = _callbackRemote.Proxy;
            }
            else
            {
                _callbackTarget = _target;
            }
        }
        return _callbackTarget;
    }

    private ICallCost CreateRemote()
    {
        _remote = Remote.Open<ICallCost>(RemoteServer.Shared(Transport).Address, RemoteServer.Options);
        ICallCost proxy = _remote.Proxy;
        // Bring both processes' call paths to optimised code before BenchmarkDotNet's own warm-up.
        int rounds = Transport == "shm" ? 20_000 : 500;
        for (int i = 0; i < rounds; i++)
        {
            proxy.Test(i);
            proxy.TestVirt(i);
            proxy.TestData(_data);
            proxy.TestString(Text);
            proxy.TestBytes(_bytes);
            proxy.TestStruct(_vector);
        }
        return proxy;
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _domain?.Dispose();
        _remote?.Dispose();
        _callbackRemote?.Dispose();
        _callbackServer?.Dispose();
        _callbackRemote = null;
        _callbackServer = null;
        _callbackTarget = null;
    }

    [Benchmark(Description = "int", OperationsPerInvoke = Calls)]
    public void Int()
    {
        for (int i = 0; i < Calls; i++)
        {
            _target.Test(42);
        }
    }

    [Benchmark(Description = "virt", OperationsPerInvoke = Calls)]
    public void Virt()
    {
        for (int i = 0; i < Calls; i++)
        {
            _target.TestVirt(42);
        }
    }

    [Benchmark(Description = "data", OperationsPerInvoke = Calls)]
    public void DataCall()
    {
        for (int i = 0; i < Calls; i++)
        {
            _target.TestData(_data);
        }
    }

    [Benchmark(Description = "str", OperationsPerInvoke = Calls)]
    public void Str()
    {
        for (int i = 0; i < Calls; i++)
        {
            _target.TestString(Text);
        }
    }

    [Benchmark(Description = "byte", OperationsPerInvoke = Calls)]
    public void Bytes()
    {
        for (int i = 0; i < Calls; i++)
        {
            _target.TestBytes(_bytes);
        }
    }

    [Benchmark(Description = "int[1M]", OperationsPerInvoke = Calls)]
    public void Ints()
    {
        for (int i = 0; i < Calls; i++)
        {
            _target.TestInts(_ints);
        }
    }

    [Benchmark(Description = "struct", OperationsPerInvoke = Calls)]
    public void Struct()
    {
        for (int i = 0; i < Calls; i++)
        {
            _target.TestStruct(_vector);
        }
    }

    [Benchmark(Description = "ref/out", OperationsPerInvoke = Calls)]
    public int RefOut()
    {
        int sum = 0;
        for (int i = 0; i < Calls; i++)
        {
            int value = 20;
            _target.TestRefOut(ref value, out int doubled);
            sum += value + doubled;
        }
        return sum;
    }

    [Benchmark(Description = "Task<int>", OperationsPerInvoke = Calls)]
    public async Task<int> TaskOfInt()
    {
        int sum = 0;
        for (int i = 0; i < Calls; i++)
        {
            sum += await _target.TestTask(42).ConfigureAwait(false);
        }
        return sum;
    }

    [Benchmark(Description = "oneway", OperationsPerInvoke = Calls)]
    public void OneWay()
    {
        for (int i = 0; i < Calls; i++)
        {
            _target.TestOneWay(1);
        }
    }

    [Benchmark(Description = "callback", OperationsPerInvoke = Calls)]
    public int Callback()
    {
        int sum = 0;
        ICallCost target = CallbackTarget();
        for (int i = 0; i < Calls; i++)
        {
            sum += target.TestCallback(_sinkObject);
        }
        return sum;
    }

    [Benchmark(Description = "graph100", OperationsPerInvoke = Calls)]
    public void Graph()
    {
        for (int i = 0; i < Calls; i++)
        {
            _target.TestGraph(_tree);
        }
    }
}

/// <summary>
/// The price of the XCall event source and meter when nobody listens: the one enabled-check every framed
/// call makes (compare with the <c>int</c> rows).
/// </summary>
public class TelemetryCheckBenchmark
{
    [Benchmark(Description = "telemetry-check", OperationsPerInvoke = CallCostBenchmarks.Calls)]
    public bool Check()
    {
        bool any = false;
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            any |= XCall.Diagnostics.CallTelemetry.Enabled;
        }
        return any;
    }
}

/// <summary>The reference row: a plain local interface call of <c>void Test(int)</c>.</summary>
[MemoryDiagnoser]
public class LocalCallBenchmark
{
    private ICallCost _target = null!;

    [GlobalSetup]
    public void Setup() => _target = new DerivedCallCostService();

    [Benchmark(Baseline = true, Description = "loc", OperationsPerInvoke = CallCostBenchmarks.Calls)]
    public void Loc()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.Test(42);
        }
    }
}
