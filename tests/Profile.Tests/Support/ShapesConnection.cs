using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.Profile.Tests.Support;

/// <summary>A framed client of <see cref="Shapes"/> over an in-memory channel pair inside this process.</summary>
internal sealed class ShapesConnection : IDisposable
{
    private readonly XCallServer _server;
    private readonly XCallConnection _client;

    /// <summary>Connects; the endpoints are <c>mem://name/server</c> and <c>mem://name/client</c>.</summary>
    public ShapesConnection(string name)
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair(name);
        _server = new XCallServer().Add<IShapes>(new Shapes());
        _server.Attach(serverChannel);
        _client = new XCallConnection(clientChannel);
        _client.Start();
        Shapes = _client.GetService<IShapes>();
    }

    /// <summary>The proxy.</summary>
    public IShapes Shapes { get; }

    /// <summary>Closes both sides.</summary>
    public void Dispose()
    {
        _client.Dispose();
        _server.Dispose();
    }
}
