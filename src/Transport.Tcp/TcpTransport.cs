using System.Net;
using System.Net.Sockets;

namespace XCall.Transport.Tcp;

/// <summary>
/// Entry points of the TCP transport: listen for connections, or connect to a listener. Every channel
/// carries XCall frames (<see cref="FrameChannel"/>) after an optional TLS and pre-shared-key handshake.
/// </summary>
public static class TcpTransport
{
    /// <summary>
    /// Starts listening on <paramref name="endpoint"/>; port 0 picks a free port (see
    /// <see cref="TcpChannelListener.LocalEndpoint"/>).
    /// </summary>
    /// <remarks>
    /// Pass <see cref="IPAddress.Loopback"/> unless other machines must reach this one: listening on
    /// <see cref="IPAddress.Any"/> or a public address is an explicit opt-in, and then belongs with
    /// <see cref="TcpOptions.Security"/> (TLS and/or a pre-shared key).
    /// </remarks>
    public static TcpChannelListener Listen(IPEndPoint endpoint, TcpOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        options ??= TcpOptions.Default;
        options.Validate();
        return new TcpChannelListener(endpoint, options);
    }

    /// <summary>
    /// Connects to a listener at <paramref name="host"/>:<paramref name="port"/> and completes the handshake.
    /// </summary>
    /// <exception cref="TimeoutException">Connecting and the handshake took longer than <see cref="TcpOptions.ConnectTimeout"/>.</exception>
    /// <exception cref="XCallDisconnectedException">The host cannot be resolved or reached, or refused the connection, or closed it during the handshake.</exception>
    /// <exception cref="System.Security.Authentication.AuthenticationException">TLS or the pre-shared key was refused.</exception>
    /// <exception cref="XCallProtocolException">The peer is not an XCall TCP endpoint, or speaks another transport version.</exception>
    public static async Task<FrameChannel> ConnectAsync(string host, int port, TcpOptions? options = null, CancellationToken cancellationToken = default)
    {
        options = CheckConnectArguments(host, port, options);
        string endpoint = FormatEndpoint(host, port);
        using CancellationTokenSource deadline = CreateDeadline(options, cancellationToken);
        IPAddress[] addresses;
        try
        {
            addresses = IPAddress.TryParse(host, out IPAddress? literal)
                ? [literal]
                : await Dns.GetHostAddressesAsync(host, deadline.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw ConnectTimedOut(endpoint, options);
        }
        catch (SocketException ex)
        {
            throw new XCallDisconnectedException(endpoint, $"cannot resolve '{host}' ({ex.SocketErrorCode})", ex);
        }
        // The connect and the handshake block a thread of their own: the socket must never run an asynchronous
        // operation, or its receives would go through the epoll thread for good (see SocketLink).
        return await DedicatedThread.Run<FrameChannel>(
            () => ConnectBlocking(addresses, host, port, endpoint, options, deadline.Token, cancellationToken), "XCall tcp connect")
            .ConfigureAwait(false);
    }

    /// <summary>Connects synchronously; see <see cref="ConnectAsync"/>.</summary>
    public static FrameChannel Connect(string host, int port, TcpOptions? options = null)
    {
        options = CheckConnectArguments(host, port, options);
        string endpoint = FormatEndpoint(host, port);
        using CancellationTokenSource deadline = CreateDeadline(options, CancellationToken.None);
        IPAddress[] addresses;
        try
        {
            addresses = IPAddress.TryParse(host, out IPAddress? literal) ? [literal] : Dns.GetHostAddresses(host);
        }
        catch (SocketException ex)
        {
            throw new XCallDisconnectedException(endpoint, $"cannot resolve '{host}' ({ex.SocketErrorCode})", ex);
        }
        return ConnectBlocking(addresses, host, port, endpoint, options, deadline.Token, CancellationToken.None);
    }

    private static TcpOptions CheckConnectArguments(string host, int port, TcpOptions? options)
    {
        ArgumentException.ThrowIfNullOrEmpty(host);
        ArgumentOutOfRangeException.ThrowIfLessThan(port, IPEndPoint.MinPort + 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(port, IPEndPoint.MaxPort);
        options ??= TcpOptions.Default;
        options.Validate();
        return options;
    }

    private static CancellationTokenSource CreateDeadline(TcpOptions options, CancellationToken cancellationToken)
    {
        CancellationTokenSource deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (options.ConnectTimeout != Timeout.InfiniteTimeSpan)
        {
            deadline.CancelAfter(options.ConnectTimeout);
        }
        return deadline;
    }

    private static TcpFrameChannel ConnectBlocking(IPAddress[] addresses, string host, int port, string endpoint, TcpOptions options,
        CancellationToken deadline, CancellationToken cancellationToken)
    {
        SocketException? lastError = null;
        foreach (IPAddress address in addresses)
        {
            var socket = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                TcpLink link;
                using (deadline.UnsafeRegister(static s => ((Socket)s!).Dispose(), socket))
                {
                    try
                    {
                        socket.Connect(address, port);
                    }
                    catch (SocketException ex) when (!deadline.IsCancellationRequested)
                    {
                        lastError = ex;
                        socket.Dispose();
                        continue;
                    }
                    Configure(socket, options);
                    link = TcpHandshake.Run(socket, isServer: false, host, endpoint, options);
                }
                // Disposing the registration waited for a callback in flight: past here the deadline cannot close the socket.
                if (deadline.IsCancellationRequested)
                {
                    link.Dispose();
                    throw new OperationCanceledException(deadline);
                }
                return new TcpFrameChannel(link, endpoint, options);
            }
            catch (Exception) when (deadline.IsCancellationRequested)
            {
                socket.Dispose();
                cancellationToken.ThrowIfCancellationRequested();
                throw ConnectTimedOut(endpoint, options);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        }
        throw new XCallDisconnectedException(endpoint,
            lastError is null ? "the host has no address" : $"cannot connect ({lastError.SocketErrorCode})", lastError);
    }

    internal static void Configure(Socket socket, TcpOptions options)
    {
        socket.NoDelay = options.NoDelay;
        if (options.SendBufferSize is int send)
        {
            socket.SendBufferSize = send;
        }
        if (options.ReceiveBufferSize is int receive)
        {
            socket.ReceiveBufferSize = receive;
        }
    }

    private static TimeoutException ConnectTimedOut(string endpoint, TcpOptions options) =>
        new($"Connecting to {endpoint} timed out after {options.ConnectTimeout.TotalMilliseconds:0} ms (TcpOptions.ConnectTimeout).");

    /// <summary>"tcp://host:port", with an IPv6 literal in brackets.</summary>
    internal static string FormatEndpoint(string host, int port) =>
        host.Contains(':') && !host.StartsWith('[') ? $"tcp://[{host}]:{port}" : $"tcp://{host}:{port}";

    /// <summary>"tcp://address:port" of an accepted peer (IPv4-mapped addresses shown as IPv4).</summary>
    internal static string FormatEndpoint(EndPoint? endpoint) => endpoint switch
    {
        IPEndPoint { Address.IsIPv4MappedToIPv6: true } ip => $"tcp://{new IPEndPoint(ip.Address.MapToIPv4(), ip.Port)}",
        IPEndPoint ip => $"tcp://{ip}",
        _ => "tcp://unknown",
    };
}
