using XCall.Tests.Contracts;
using XCall.Tests.Shared;

namespace XCall.Tests;

/// <summary>A host process per test class, serving the shape contract at an address.</summary>
public abstract class HostFixture : IDisposable
{
    protected HostFixture(string address, string[] hostArgs, RemoteOptions? options = null)
    {
        Host = HostProcess.Start(address, hostArgs);
        Shapes = Remote.Open<IShapes>(Host.Address, options);
        Probe = Remote.Open<IProbe>(Host.Address, options);
    }

    public HostProcess Host { get; }
    public RemoteService<IShapes> Shapes { get; }
    public RemoteService<IProbe> Probe { get; }

    public void Dispose()
    {
        Shapes.Dispose();
        Probe.Dispose();
        Host.Dispose();
    }
}

public sealed class ShmHostFixture() : HostFixture($"shm://{HostProcess.UniqueName("shapes")}", []);

public sealed class TcpHostFixture() : HostFixture($"tcp://127.0.0.1:0/{HostProcess.UniqueName("shapes")}", ["--no-shm"]);

public sealed class ShmInlineHostFixture() : HostFixture($"shm://{HostProcess.UniqueName("inline")}", ["--inline"]);

/// <summary>Every method shape over shared memory, to a real server process.</summary>
public sealed class ShmShapesTests(ShmHostFixture fixture) : ShapesContractTests, IClassFixture<ShmHostFixture>
{
    protected override IShapes Shapes => fixture.Shapes.Proxy;
    protected override IProbe Probe => fixture.Probe.Proxy;

    [Fact]
    public void The_service_runs_in_another_process_over_shm()
    {
        Assert.Equal("shm", fixture.Shapes.Transport);
        Assert.Equal(fixture.Host.ProcessId, Probe.ProcessId());
        Assert.NotEqual(Environment.ProcessId, Probe.ProcessId());
    }
}

/// <summary>Every method shape over TCP on loopback, to a real server process.</summary>
public sealed class TcpShapesTests(TcpHostFixture fixture) : ShapesContractTests, IClassFixture<TcpHostFixture>
{
    protected override IShapes Shapes => fixture.Shapes.Proxy;
    protected override IProbe Probe => fixture.Probe.Proxy;

    [Fact]
    public void The_service_runs_in_another_process_over_tcp()
    {
        Assert.Equal("tcp", fixture.Shapes.Transport);
        Assert.Equal(fixture.Host.ProcessId, Probe.ProcessId());
    }
}
