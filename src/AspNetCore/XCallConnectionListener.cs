using System.Net;
using Microsoft.AspNetCore.Connections;
using XCall.Streams;

namespace XCall.AspNetCore;

/// <summary>Kestrel's view of an <see cref="XCallStreamListener"/>.</summary>
internal sealed class XCallConnectionListener(XCallStreamListener listener, XCallEndPoint endPoint) : IConnectionListener
{
    public EndPoint EndPoint => endPoint;

    public async ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            XCallStream stream = await listener.AcceptAsync(cancellationToken).ConfigureAwait(false);
            return new XCallConnectionContext(stream, endPoint);
        }
        catch (ObjectDisposedException)
        {
            return null; // unbound: Kestrel's accept loop ends on null
        }
    }

    public ValueTask UnbindAsync(CancellationToken cancellationToken = default)
    {
        listener.Dispose();
        return default;
    }

    public ValueTask DisposeAsync()
    {
        listener.Dispose();
        return default;
    }
}
