using XCall.Tests.Contracts;

namespace XCall.Tests;

/// <summary>
/// A server of one <typeparamref name="TShapes"/> with the given connection options (on loopback TCP and, beside it,
/// shared memory), and a client of it over <c>transport</c> ("shm" or "tcp").
/// </summary>
internal sealed class ServedShapes<TShapes> : IDisposable
    where TShapes : class, IShapes
{
    private readonly RemoteListener _listener;

    public ServedShapes(TShapes shapes, ConnectionOptions? options, string transport, string name)
    {
        Shapes = shapes;
        Server = new XCallServer(options).Add<IShapes>(shapes);
        string unique = HostProcess.UniqueName(name);
        _listener = Remote.Serve($"tcp://127.0.0.1:0/{unique}", Server);
        string address = transport == "shm" ? $"shm://{unique}" : _listener.TcpAddress!.ToString()!;
        Client = Remote.Open<IShapes>(address, new RemoteOptions { PreferSharedMemory = transport == "shm" });
        Assert.Equal(transport, Client.Transport);
    }

    public TShapes Shapes { get; }

    public XCallServer Server { get; }

    public RemoteService<IShapes> Client { get; }

    public void Dispose()
    {
        Client.Dispose();
        _listener.Dispose();
        Server.Dispose();
    }
}
