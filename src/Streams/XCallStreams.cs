using System.Net;
using System.Net.Http;
using XCall.Transport;
using XCall.Transport.Shm;
using XCall.Transport.Tcp;

namespace XCall.Streams;

/// <summary>
/// Byte streams over XCall's transports, for stacks that take a connection as a <see cref="Stream"/> or an
/// <see cref="System.IO.Pipelines.IDuplexPipe"/>: HTTP/2 and gRPC through <see cref="ConnectCallback"/>,
/// StreamJsonRpc through <c>JsonRpc.Attach(stream)</c>.
/// </summary>
public static class XCallStreams
{
    /// <summary>Connects to a listener on <paramref name="address"/> (<c>shm://name</c> or <c>tcp://host:port</c>).</summary>
    /// <exception cref="FormatException"><paramref name="address"/> is not an XCall address.</exception>
    /// <exception cref="ArgumentException"><paramref name="address"/> is a <c>domain://</c> address, which carries calls, not bytes.</exception>
    /// <exception cref="XCallException">The connection could not be made (nobody listens, the peer refused, a timeout).</exception>
    public static async Task<XCallStream> ConnectAsync(string address, XCallStreamOptions? options = null, CancellationToken cancellationToken = default)
    {
        options ??= XCallStreamOptions.Default;
        int window = options.ValidatedWindow();
        XCallAddress parsed = XCallAddress.Parse(address);
        FrameChannel channel = parsed.Scheme switch
        {
            ShmTransport.Scheme => await ShmTransport.ConnectAsync(parsed.Name, options.Shm, cancellationToken).ConfigureAwait(false),
            "tcp" => await TcpTransport.ConnectAsync(parsed.Host!, parsed.Port, options.Tcp, cancellationToken).ConfigureAwait(false),
            _ => throw NotAStreamScheme(parsed),
        };
        return new XCallStream(channel, window);
    }

    /// <summary>Listens for byte streams on <paramref name="address"/> (<c>shm://name</c>, or <c>tcp://host:port</c> with port 0 for any free one).</summary>
    /// <exception cref="FormatException"><paramref name="address"/> is not an XCall address, or its TCP host is not an IP address or <c>localhost</c>.</exception>
    /// <exception cref="ArgumentException"><paramref name="address"/> is a <c>domain://</c> address.</exception>
    public static XCallStreamListener Listen(string address, XCallStreamOptions? options = null)
    {
        options ??= XCallStreamOptions.Default;
        int window = options.ValidatedWindow();
        XCallAddress parsed = XCallAddress.Parse(address);
        switch (parsed.Scheme)
        {
            case ShmTransport.Scheme:
                ShmListener shm = ShmTransport.Listen(parsed.Name, options.Shm);
                return new XCallStreamListener(shm, shm.AcceptAsync, parsed, window);
            case "tcp":
                IPAddress ip = parsed.Host == "localhost" ? IPAddress.Loopback
                    : IPAddress.TryParse(parsed.Host, out IPAddress? literal) ? literal
                    : throw new FormatException($"'{address}': a stream listener binds an IP address or localhost, not '{parsed.Host}'.");
                TcpChannelListener tcp = TcpTransport.Listen(new IPEndPoint(ip, parsed.Port), options.Tcp);
                XCallAddress bound = XCallAddress.Parse($"tcp://{tcp.LocalEndpoint.Address}:{tcp.LocalEndpoint.Port}/{parsed.Name}");
                return new XCallStreamListener(tcp, tcp.AcceptAsync, bound, window);
            default:
                throw NotAStreamScheme(parsed);
        }
    }

    /// <summary>
    /// A <see cref="SocketsHttpHandler.ConnectCallback"/> that connects every HTTP connection of the handler to
    /// <paramref name="address"/>, whatever the request's host: <c>new SocketsHttpHandler { ConnectCallback =
    /// XCallStreams.ConnectCallback("shm://greeter") }</c> under a <c>GrpcChannel</c> or an <see cref="HttpClient"/>.
    /// </summary>
    public static Func<SocketsHttpConnectionContext, CancellationToken, ValueTask<Stream>> ConnectCallback(string address, XCallStreamOptions? options = null)
    {
        XCallAddress.Parse(address); // a bad address fails here, not at the first request
        return async (_, cancellationToken) =>
        {
            try
            {
                return await ConnectAsync(address, options, cancellationToken).ConfigureAwait(false);
            }
            catch (XCallException ex)
            {
                throw new HttpRequestException(HttpRequestError.ConnectionError, $"Could not connect to {address}: {ex.Message}", ex);
            }
        };
    }

    private static ArgumentException NotAStreamScheme(XCallAddress address) =>
        new($"'{address}': byte streams run over shm:// and tcp:// addresses; a {address.Scheme}:// address carries calls only.", nameof(address));
}
