using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Tests.Shared;

namespace XCall.Tests;

/// <summary>A host process per test class, serving <see cref="ICallbacks"/> and <see cref="IActivation"/>.</summary>
public abstract class ReferenceHostFixture : IDisposable
{
    protected ReferenceHostFixture(string address, string[] hostArgs)
    {
        Host = HostProcess.Start(address, hostArgs);
        Callbacks = Remote.Open<ICallbacks>(Host.Address);
        Activation = Remote.Open<IActivation>(Host.Address);
    }

    public HostProcess Host { get; }

    public RemoteService<ICallbacks> Callbacks { get; }

    public RemoteService<IActivation> Activation { get; }

    public void Dispose()
    {
        Callbacks.Dispose();
        Activation.Dispose();
        Host.Dispose();
    }
}

public sealed class ShmReferenceHostFixture() : ReferenceHostFixture($"shm://{HostProcess.UniqueName("refs")}", []);

public sealed class TcpReferenceHostFixture() : ReferenceHostFixture($"tcp://127.0.0.1:0/{HostProcess.UniqueName("refs")}", ["--no-shm"]);

/// <summary>Callbacks, references and activation over shared memory, to a real server process.</summary>
public sealed class ShmReferenceTests(ShmReferenceHostFixture fixture) : ReferenceContractTests, IClassFixture<ShmReferenceHostFixture>
{
    protected override ICallbacks Callbacks => fixture.Callbacks.Proxy;

    protected override IActivation Activation => fixture.Activation.Proxy;

    protected override XCallConnection ClientConnection => fixture.Callbacks.Connection!;

    protected override string DefaultDispatchThread => "receive";

    protected override (ICallbacks Service, IDisposable Connection) OpenSeparate()
    {
        RemoteService<ICallbacks> service = Remote.Open<ICallbacks>(fixture.Host.Address);
        return (service.Proxy, service);
    }
}

/// <summary>Callbacks, references and activation over TCP, to a real server process.</summary>
public sealed class TcpReferenceTests(TcpReferenceHostFixture fixture) : ReferenceContractTests, IClassFixture<TcpReferenceHostFixture>
{
    protected override ICallbacks Callbacks => fixture.Callbacks.Proxy;

    protected override IActivation Activation => fixture.Activation.Proxy;

    protected override XCallConnection ClientConnection => fixture.Callbacks.Connection!;

    protected override string DefaultDispatchThread => "receive";

    protected override (ICallbacks Service, IDisposable Connection) OpenSeparate()
    {
        RemoteService<ICallbacks> service = Remote.Open<ICallbacks>(fixture.Host.Address);
        return (service.Proxy, service);
    }
}
