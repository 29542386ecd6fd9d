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
    private readonly Arguments _args = new();
    private CallLoops _loops = null!;
    internal const string Text = "hola";

    /// <summary>The arguments the rows pass, made once per benchmark instance.</summary>
    internal sealed class Arguments
    {
        public readonly Data Data = new() { p = 1 };
        public readonly Stamp Stamp = new(1);
        public readonly byte[] Bytes = new byte[1000];
        public readonly int[] Ints = new int[1_000_000];
        public readonly Vector Vector = new() { X = 1, Y = 2, Z = 3, Id = 4 };
        public readonly TreeNode Tree = CallCostService.Tree(100);
        public readonly ICallSink Sink = new CallSink();
    }

    public static IEnumerable<string> Transports => BenchOptions.Current.Transports;

    [ParamsSource(nameof(Transports))]
    public string Transport { get; set; } = "direct";

    [GlobalSetup]
    public void Setup()
    {
        _args.Bytes[^1] = 1;
        _target = Transport switch
        {
            "direct" => new DerivedCallCostService(),
            "domain" => CreateDomain(),
            "shm" or "tcp" => CreateRemote(),
            _ => throw new InvalidOperationException($"Unknown transport {Transport}."),
        };
        _target.Test(1);
        _loops = CallLoops.For(Transport, _target, _args);
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
    /// The callback row's own server (default dispatch, as every row's), started on the row's first call and stopped
    /// with it, so its threads never compete with the other rows on two cores.
    /// </summary>
    private ICallCost CallbackTarget()
    {
        if (_callbackTarget is null)
        {
            if (Transport is "shm" or "tcp")
            {
                _callbackServer = RemoteServer.Start(Transport);
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
            proxy.TestData(_args.Data);
            proxy.TestRecord(_args.Stamp);
            proxy.TestString(Text);
            proxy.TestBytes(_args.Bytes);
            proxy.TestStruct(_args.Vector);
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
    public void Int() => _loops.Int();

    [Benchmark(Description = "virt", OperationsPerInvoke = Calls)]
    public void Virt() => _loops.Virt();

    [Benchmark(Description = "data", OperationsPerInvoke = Calls)]
    public void DataCall() => _loops.Data();

    [Benchmark(Description = "record", OperationsPerInvoke = Calls)]
    public void Record() => _loops.Record();

    [Benchmark(Description = "str", OperationsPerInvoke = Calls)]
    public void Str() => _loops.Str();

    [Benchmark(Description = "byte", OperationsPerInvoke = Calls)]
    public void Bytes() => _loops.Bytes();

    [Benchmark(Description = "int[1M]", OperationsPerInvoke = Calls)]
    public void Ints() => _loops.Ints();

    [Benchmark(Description = "struct", OperationsPerInvoke = Calls)]
    public void Struct() => _loops.Struct();

    [Benchmark(Description = "ref/out", OperationsPerInvoke = Calls)]
    public int RefOut() => _loops.RefOut();

    [Benchmark(Description = "Task<int>", OperationsPerInvoke = Calls)]
    public Task<int> TaskOfInt() => _loops.TaskOfInt();

    [Benchmark(Description = "oneway", OperationsPerInvoke = Calls)]
    public void OneWay() => _loops.OneWay();

    [Benchmark(Description = "callback", OperationsPerInvoke = Calls)]
    public int Callback() => _loops.Callback(CallbackTarget());

    [Benchmark(Description = "graph100", OperationsPerInvoke = Calls)]
    public void Graph() => _loops.Graph();
}

/// <summary>
/// The measured loops, one copy per transport. Every row of <see cref="CallCostBenchmarks"/> runs in one
/// process, and with tiered PGO a call site's profile is taken from whatever ran there first: shared loops
/// would give the domain rows the direct rows' profile (the JIT then guards for the wrong type, and the
/// domain <c>int</c> row pays for the failed guard). A generic class instantiated over a different struct
/// per transport gets its own code, so each transport's call sites see only its own proxy, as a caller's
/// would. The benchmark method's one virtual call into the loop is spread over <see cref="CallCostBenchmarks.Calls"/> calls.
/// </summary>
internal abstract class CallLoops(ICallCost target, CallCostBenchmarks.Arguments args)
{
    protected readonly ICallCost _target = target;
    protected readonly Data _data = args.Data;
    protected readonly Stamp _stamp = args.Stamp;
    protected readonly byte[] _bytes = args.Bytes;
    protected readonly int[] _ints = args.Ints;
    protected readonly Vector _vector = args.Vector;
    protected readonly TreeNode _tree = args.Tree;
    protected readonly ICallSink _sinkObject = args.Sink;
    protected const string Text = CallCostBenchmarks.Text;

    public abstract void Int();
    public abstract void Virt();
    public abstract void Data();
    public abstract void Record();
    public abstract void Str();
    public abstract void Bytes();
    public abstract void Ints();
    public abstract void Struct();
    public abstract int RefOut();
    public abstract Task<int> TaskOfInt();
    public abstract void OneWay();
    public abstract int Callback(ICallCost target);
    public abstract void Graph();

    public static CallLoops For(string transport, ICallCost target, CallCostBenchmarks.Arguments args) => transport switch
    {
        "direct" => new CallLoops<DirectRows>(target, args),
        "domain" => new CallLoops<DomainRows>(target, args),
        "shm" => new CallLoops<ShmRows>(target, args),
        "tcp" => new CallLoops<TcpRows>(target, args),
        _ => throw new InvalidOperationException($"Unknown transport {transport}."),
    };

    internal struct DirectRows;

    internal struct DomainRows;

    internal struct ShmRows;

    internal struct TcpRows;
}

/// <summary>The loops for the transport named by <typeparamref name="TRows"/> (see <see cref="CallLoops"/>).</summary>
internal sealed class CallLoops<TRows>(ICallCost target, CallCostBenchmarks.Arguments args) : CallLoops(target, args)
    where TRows : struct
{
    public override void Int()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.Test(42);
        }
    }

    public override void Virt()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.TestVirt(42);
        }
    }

    public override void Data()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.TestData(_data);
        }
    }

    public override void Record()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.TestRecord(_stamp);
        }
    }

    public override void Str()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.TestString(Text);
        }
    }

    public override void Bytes()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.TestBytes(_bytes);
        }
    }

    public override void Ints()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.TestInts(_ints);
        }
    }

    public override void Struct()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.TestStruct(_vector);
        }
    }

    public override int RefOut()
    {
        int sum = 0;
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            int value = 20;
            _target.TestRefOut(ref value, out int doubled);
            sum += value + doubled;
        }
        return sum;
    }

    public override async Task<int> TaskOfInt()
    {
        int sum = 0;
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            sum += await _target.TestTask(42).ConfigureAwait(false);
        }
        return sum;
    }

    public override void OneWay()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.TestOneWay(1);
        }
    }

    public override int Callback(ICallCost target)
    {
        int sum = 0;
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            sum += target.TestCallback(_sinkObject);
        }
        return sum;
    }

    public override void Graph()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
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

    /// <summary>
    /// The floor of the <c>data</c> rows that copy: a local call handing the callee a new <see cref="Data"/>,
    /// the one allocation any copy makes (a domain call's copy is exactly this).
    /// </summary>
    [Benchmark(Description = "data-new", OperationsPerInvoke = CallCostBenchmarks.Calls)]
    public void DataNew()
    {
        for (int i = 0; i < CallCostBenchmarks.Calls; i++)
        {
            _target.TestData(new Data { p = 42 });
        }
    }
}
