using XCall.Runtime;

namespace XCall.Parallel.Host;

/// <summary>The caller's side of the tunnel to one host rank: the batching channel and the connection its proxies call through.</summary>
internal sealed class Tunnel : IDisposable
{
    public Tunnel(BatchChannel channel)
    {
        Channel = channel;
        Connection = new XCallConnection(channel);
        Connection.Start();
    }

    public BatchChannel Channel { get; }

    public XCallConnection Connection { get; }

    public void Dispose() => Connection.Dispose();
}
