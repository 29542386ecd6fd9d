using System.Net;
using Microsoft.AspNetCore.Connections;
using XCall.Streams;

namespace XCall.AspNetCore;

/// <summary>
/// Kestrel's transport for <see cref="XCallEndPoint"/>s; it binds nothing else, so Kestrel's socket transport keeps
/// serving IP and Unix-socket endpoints beside it (<see cref="IConnectionListenerFactorySelector"/>). Registered by
/// <see cref="XCallKestrelExtensions.UseXCallTransport"/>.
/// </summary>
public sealed class XCallConnectionListenerFactory : IConnectionListenerFactory, IConnectionListenerFactorySelector
{
    private readonly XCallStreamOptions _options;

    /// <summary>Creates the factory; its listeners use <paramref name="options"/> (the defaults when null).</summary>
    public XCallConnectionListenerFactory(XCallStreamOptions? options = null)
    {
        _options = options ?? XCallStreamOptions.Default;
    }

    /// <inheritdoc/>
    public bool CanBind(EndPoint endpoint) => endpoint is XCallEndPoint;

    /// <inheritdoc/>
    /// <exception cref="NotSupportedException"><paramref name="endpoint"/> is not an <see cref="XCallEndPoint"/>.</exception>
    public ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken = default)
    {
        if (endpoint is not XCallEndPoint xcall)
        {
            throw new NotSupportedException($"The XCall transport binds XCallEndPoint only, not {endpoint.GetType().Name} '{endpoint}'.");
        }
        XCallStreamListener listener = XCallStreams.Listen(xcall.Address.ToString(), _options);
        var bound = new XCallEndPoint(listener.Address.ToString());
        return ValueTask.FromResult<IConnectionListener>(new XCallConnectionListener(listener, bound));
    }
}
