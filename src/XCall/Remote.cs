using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using XCall.Domain;
using XCall.Runtime;
using XCall.Transport;
using XCall.Transport.Shm;
using XCall.Transport.Tcp;

namespace XCall;

/// <summary>
/// One entry point for every transport. <see cref="Open{T}"/> connects to <c>domain://name</c>,
/// <c>shm://name</c> or <c>tcp://host:port/name</c>; a TCP address whose host is this machine uses shared
/// memory when a server of that name listens there. <see cref="Serve"/> offers a server's services on an
/// address (a TCP server also on shared memory under its name).
/// </summary>
public static class Remote
{
    /// <summary>Opens the service of contract <typeparamref name="T"/> at <paramref name="address"/>.</summary>
    /// <exception cref="FormatException">The address is malformed.</exception>
    /// <exception cref="XCallDisconnectedException">Nothing answers at the address.</exception>
    /// <exception cref="XCallException">The server does not offer <typeparamref name="T"/>, or its contract differs.</exception>
    public static RemoteService<T> Open<T>(string address, RemoteOptions? options = null) where T : class =>
        OpenAsync<T>(address, options).GetAwaiter().GetResult();

    /// <summary>Asynchronous <see cref="Open{T}"/>.</summary>
    public static async Task<RemoteService<T>> OpenAsync<T>(string address, RemoteOptions? options = null, CancellationToken cancellationToken = default) where T : class
    {
        options ??= RemoteOptions.Default;
        options.Connection.Validate(); // before a channel is opened that the connection would then have to close
        XCallAddress parsed = XCallAddress.Parse(address);
        if (parsed.Scheme == "domain")
        {
            DomainHost host = DomainHost.Find(parsed.Name)
                ?? throw new XCallDisconnectedException(parsed.ToString(), "no domain host of that name is loaded in this process");
            return new RemoteService<T>(CreateInDomain<T>(host), parsed, "domain", null, null);
        }

        (FrameChannel channel, string transport) = await ConnectChannel(parsed, options, cancellationToken).ConfigureAwait(false);
        ReconnectingChannel? reconnecting = null;
        if (options.Reconnect)
        {
            reconnecting = new ReconnectingChannel(channel, async token => (await ConnectChannel(parsed, options, token).ConfigureAwait(false)).Channel, options);
            channel = reconnecting;
        }
        var connection = new XCallConnection(channel, options.Connection);
        try
        {
            connection.Start();
            TimeSpan helloTimeout = Shorter(options.Connection.CallTimeout, transport == "shm" ? options.Shm.ConnectTimeout : options.Tcp.ConnectTimeout);
            // Awaited, not waited for: an opening on a pool thread must not hold it while the server's own accept
            // (a pool continuation in this process, when the server is here too) waits for one.
            ulong objectId = await connection.GetServiceObjectIdAsync<T>(helloTimeout, cancellationToken).ConfigureAwait(false);
            var service = new RemoteService<T>(connection.GetProxy<T>(objectId), parsed, transport, connection, null);
            if (reconnecting is not null)
            {
                reconnecting.StateChanged += service.OnStateChanged;
                reconnecting.AfterReconnect = () => CheckObjectId(connection.GetServiceObjectId<T>(helloTimeout));
                reconnecting.AfterReconnectAsync = async () => CheckObjectId(await connection.GetServiceObjectIdAsync<T>(helloTimeout).ConfigureAwait(false));
                void CheckObjectId(ulong again)
                {
                    if (again != objectId)
                    {
                        throw new XCallException($"{parsed} serves {typeof(T).FullName} under another object id after the reconnect; open the service again.");
                    }
                }
            }
            return service;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    /// <summary>The shorter of two timeouts, either of which may be infinite.</summary>
    private static TimeSpan Shorter(TimeSpan a, TimeSpan b) =>
        a == Timeout.InfiniteTimeSpan ? b : b == Timeout.InfiniteTimeSpan ? a : a < b ? a : b;

    private static async Task<(FrameChannel Channel, string Transport)> ConnectChannel(XCallAddress parsed, RemoteOptions options, CancellationToken cancellationToken)
    {
        if (parsed.Scheme == "shm")
        {
            return (await ShmTransport.ConnectAsync(parsed.Name, options.Shm, cancellationToken).ConfigureAwait(false), "shm");
        }
        if (options.PreferSharedMemory && parsed.Name.Length > 0 && IsThisMachine(parsed.Host!) && ShmListening(parsed.Name, options.Shm)
            && await TryShm(parsed.Name, options.Shm, cancellationToken).ConfigureAwait(false) is { } shm)
        {
            return (shm, "shm");
        }
        return (await TcpTransport.ConnectAsync(parsed.Host!, parsed.Port, options.Tcp, cancellationToken).ConfigureAwait(false), "tcp");
    }

    /// <summary>
    /// Serves <paramref name="server"/>'s services at <paramref name="address"/> (<c>shm://name</c> or
    /// <c>tcp://host:port/name</c>; TCP listens on loopback unless the host says otherwise) until the
    /// returned listener is disposed.
    /// </summary>
    public static RemoteListener Serve(string address, XCallServer server, RemoteOptions? options = null)
    {
        options ??= RemoteOptions.Default;
        XCallAddress parsed = XCallAddress.Parse(address);
        var listener = new RemoteListener(server);
        try
        {
            if (parsed.Scheme == "shm")
            {
                listener.AddShm(ShmTransport.Listen(parsed.Name, options.Shm));
            }
            else if (parsed.Scheme == "tcp")
            {
                IPAddress ip = parsed.Host is "localhost" or "" ? IPAddress.Loopback : IPAddress.Parse(parsed.Host!);
                listener.AddTcp(TcpTransport.Listen(new IPEndPoint(ip, parsed.Port), options.Tcp), parsed);
                if (options.ServeSharedMemoryToo && parsed.Name.Length > 0)
                {
                    listener.AddShm(ShmTransport.Listen(parsed.Name, options.Shm));
                }
            }
            else
            {
                throw new ArgumentException($"{address}: a domain service is hosted with DomainHost.Load, not served.", nameof(address));
            }
        }
        catch
        {
            listener.Dispose();
            throw;
        }
        return listener;
    }

    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2026",
        Justification = "A DomainHost exists only after DomainHost.Load, which is itself marked; a trimmed app that never loads one never gets here.")]
    private static T CreateInDomain<T>(DomainHost host) where T : class => host.Create<T>();

    private static bool ShmListening(string name, ShmOptions options) =>
        File.Exists(Path.Combine(options.RuntimeDirectory, name + ".sock"));

    private static async Task<FrameChannel?> TryShm(string name, ShmOptions options, CancellationToken cancellationToken)
    {
        try
        {
            return await ShmTransport.ConnectAsync(name, options, cancellationToken).ConfigureAwait(false);
        }
        catch (XCallException)
        {
            return null; // a stale socket file or a server of another user: use TCP
        }
        catch (SocketException)
        {
            return null;
        }
    }

    internal static bool IsThisMachine(string host)
    {
        if (host.Equals("localhost", StringComparison.OrdinalIgnoreCase) || host.Equals(Dns.GetHostName(), StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }
        if (!IPAddress.TryParse(host, out IPAddress? ip))
        {
            return false;
        }
        if (IPAddress.IsLoopback(ip))
        {
            return true;
        }
        foreach (NetworkInterface nic in NetworkInterface.GetAllNetworkInterfaces())
        {
            foreach (UnicastIPAddressInformation unicast in nic.GetIPProperties().UnicastAddresses)
            {
                if (unicast.Address.Equals(ip))
                {
                    return true;
                }
            }
        }
        return false;
    }
}
