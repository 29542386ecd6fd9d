// Native AOT smoke test: a server and a client in this one process, over shm:// and tcp://, through the
// generated proxies and dispatchers, with data graphs, polymorphism, an exception, an async call and a
// callback. Published with PublishAot by AotSmokeTests (tests/XCall.Tests), which runs the native binary
// and expects "AOT OK" and exit code 0.
using XCall;
using XCall.Tests.Contracts;

int checks = 0;
var failures = new List<string>();

void Check(bool condition, string what)
{
    checks++;
    if (!condition)
    {
        failures.Add(what);
    }
}

using var server = new XCallServer().Add<IShapes>(new Shapes()).Add<ICallbacks>(new Callbacks());
string name = $"xcall-aot-{Environment.ProcessId}";
using RemoteListener shmListener = Remote.Serve($"shm://{name}", server);
using RemoteListener tcpListener = Remote.Serve($"tcp://127.0.0.1:0/{name}", server, new RemoteOptions { ServeSharedMemoryToo = false });

foreach (string address in new[] { $"shm://{name}", tcpListener.TcpAddress!.ToString() })
{
    string t = address[..3];
    var options = new RemoteOptions { PreferSharedMemory = false };
    using RemoteService<IShapes> shapes = Remote.Open<IShapes>(address, options);
    IShapes p = shapes.Proxy;
    Check(p.Add(2, 3) == 5, $"{t} Add");
    Check(p.Echo("hola") == "hola" && p.Echo(null) is null, $"{t} Echo");
    var order = new Order { Id = 7, Customer = "c", Tags = new Dictionary<string, int> { ["a"] = 1 } };
    Order back = p.RoundTrip(order);
    Check(back.Id == 7 && back.Customer == "c" && back.Tags!["a"] == 1 && !ReferenceEquals(back, order), $"{t} RoundTrip(Order)");
    Node? reversed = p.ReverseList(Node.Chain(100));
    Check(reversed is { Value: 99 } && p.Length(reversed) == 100, $"{t} ReverseList(Node)");
    var circle = new Circle { X = 1, Radius = 2 };
    Shape[] scaled = p.Scale([circle, new Square { Side = 3 }, circle], 2);
    Check(scaled[0] is Circle { Radius: 4 } && scaled[1] is Square { Side: 6 } && ReferenceEquals(scaled[0], scaled[2]), $"{t} Scale(Shape[])");
    try
    {
        p.Fail("boom");
        Check(false, $"{t} Fail did not throw");
    }
    catch (RemoteInvocationException ex)
    {
        Check(ex.RemoteTypeName == "System.InvalidOperationException" && ex.RemoteMessage == "boom", $"{t} Fail");
    }
    Check(await p.AddAsync(40, 2) == 42, $"{t} AddAsync");

    using RemoteService<ICallbacks> callbacks = Remote.Open<ICallbacks>(address, options);
    Check(callbacks.Proxy.CallBack(new Doubler(), 3) == 12, $"{t} CallBack");
}

if (failures.Count > 0)
{
    Console.WriteLine($"AOT FAILED {failures.Count} of {checks}: {string.Join("; ", failures)}");
    return 1;
}
Console.WriteLine($"AOT OK {checks} checks (dynamic code supported: {System.Runtime.CompilerServices.RuntimeFeature.IsDynamicCodeSupported})");
return 0;

internal sealed class Doubler : ICallback
{
    public int Report(int value) => value * 2;

    public int Nested(int depth) => depth;
}
