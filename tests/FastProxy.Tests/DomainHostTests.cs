using System.Runtime.CompilerServices;
using XCall.Domain;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

public sealed class DomainHostTests
{
    [Fact]
    public void Service_runs_in_its_own_load_context()
    {
        string name = "greeter-" + Guid.NewGuid().ToString("N");
        using DomainHost host = DomainHost.Load(DomainShapesTests.ServicePath, name);
        IGreeter greeter = host.Create<IGreeter>();
        Assert.Equal($"Ann from {name}", greeter.Greet("Ann"));
    }

    [Fact]
    public void Calls_after_dispose_fail_with_disconnected()
    {
        DomainHost host = DomainHost.Load(DomainShapesTests.ServicePath, "closed-" + Guid.NewGuid().ToString("N"));
        IShapes shapes = host.Create<IShapes>();
        Assert.Equal(3, shapes.Add(1, 2));
        host.Dispose();
        var ex = Assert.Throws<XCallDisconnectedException>(() => shapes.Add(1, 2));
        Assert.StartsWith("domain://closed-", ex.Endpoint);
    }

    [Fact]
    public void Context_unloads_after_the_host_is_disposed()
    {
        WeakReference context = LoadCallAndDispose();
        for (int i = 0; context.IsAlive && i < 200; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.False(context.IsAlive, "the collectible load context is still alive after the host was disposed");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference LoadCallAndDispose()
    {
        DomainHost host = DomainHost.Load(DomainShapesTests.ServicePath, "unload-" + Guid.NewGuid().ToString("N"));
        IShapes shapes = host.Create<IShapes>();
        Assert.Equal(3, shapes.Add(1, 2));
        Assert.Equal(42, shapes.Increment(new Data { p = 41 }).p);
        Assert.Equal("x", shapes.Echo("x"));
        Assert.Throws<RemoteInvocationException>(() => shapes.Fail("f"));
        WeakReference context = host.ContextReference();
        host.Dispose();
        return context;
    }

    [Fact]
    public void Create_reports_a_missing_implementation()
    {
        using DomainHost host = DomainHost.Load(DomainShapesTests.ServicePath, "missing-" + Guid.NewGuid().ToString("N"));
        var ex = Assert.Throws<InvalidOperationException>(() => host.Create<IDisposableContract>());
        Assert.Contains("no public class implementing", ex.Message);
    }
}

[Remotable]
public interface IDisposableContract
{
    void Nothing();
}
