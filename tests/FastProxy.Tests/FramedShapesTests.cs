using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Tests.Shared;

namespace XCall.FastProxy.Tests;

/// <summary>Every method shape as frames through an in-memory channel pair, with concurrent dispatch.</summary>
public class FramedShapesTests : ShapesContractTests, IDisposable
{
    private readonly XCallConnection _client;
    private readonly XCallConnection _server;
    private readonly IShapes _shapes;

    public FramedShapesTests() : this(DispatchMode.Concurrent) { }

    protected FramedShapesTests(DispatchMode mode)
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        _server = new XCallConnection(serverChannel, new ConnectionOptions { DispatchMode = mode });
        _server.ExposeRoot(new Shapes(), ContractRegistry.Get<IShapes>().Dispatcher);
        _server.Start();
        _client = new XCallConnection(clientChannel);
        _client.Start();
        _shapes = _client.GetProxy<IShapes>();
    }

    protected override IShapes Shapes => _shapes;

    public void Dispose()
    {
        _client.Dispose();
        _server.Dispose();
    }
}

/// <summary>The same shapes with inline dispatch on the receive thread.</summary>
public sealed class FramedInlineShapesTests : FramedShapesTests
{
    public FramedInlineShapesTests() : base(DispatchMode.Inline) { }
}
