using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using XCall.Transport.Shm;

namespace XCall.Hosting;

/// <summary>XCall clients and servers in a <see cref="IServiceCollection"/> (the Generic Host, ASP.NET Core).</summary>
public static class XCallServiceCollectionExtensions
{
    /// <summary>The configuration section of the clients: <c>XCall:Clients:&lt;interface name&gt;</c>.</summary>
    public const string ClientsSection = "XCall:Clients";

    /// <summary>The configuration section of the server: <c>XCall:Server</c>.</summary>
    public const string ServerSection = "XCall:Server";

    /// <summary>
    /// Registers a client of <typeparamref name="T"/>: <typeparamref name="T"/> (the proxy) and
    /// <see cref="RemoteService{T}"/> as singletons, connected on first use, with options from
    /// <c>XCall:Clients:&lt;T's name&gt;</c> (<see cref="XCallClientOptions"/>; its <c>Address</c> wins over
    /// <paramref name="address"/>). Connection events are logged under <c>XCall.Hosting</c>.
    /// </summary>
    public static IServiceCollection AddXCallClient<T>(this IServiceCollection services, string? address = null) where T : class
    {
        string name = typeof(T).Name;
        XCallClientStates states = ClientStates(services);
        states.Declare(name);
        services.AddOptions<XCallClientOptions>(name)
            .Configure(o => o.Address ??= address)
            .BindConfiguration($"{ClientsSection}:{name}")
            .Validate(o => !string.IsNullOrWhiteSpace(o.Address), $"No address for the XCall client of {name}: set {ClientsSection}:{name}:Address or pass one to AddXCallClient.");
        services.TryAddSingleton(provider => Open<T>(
            provider.GetRequiredService<IOptionsMonitor<XCallClientOptions>>().Get(name),
            provider.GetRequiredService<ILoggerFactory>().CreateLogger(Log.Category),
            states));
        services.TryAddSingleton(provider => provider.GetRequiredService<RemoteService<T>>().Proxy);
        return services;
    }

    /// <summary>
    /// Registers the XCall server as a hosted service: <paramref name="configure"/> adds its services
    /// (<c>(provider, server) =&gt; server.Add&lt;ICalc&gt;(provider.GetRequiredService&lt;Calc&gt;())</c>), options come from
    /// <c>XCall:Server</c> (<see cref="XCallServerOptions"/>). On shutdown it stops accepting, refuses new calls
    /// (<see cref="XCallServerBusyException"/>, not run), waits for the calls in flight to be answered, at most until the
    /// host's shutdown timeout, and closes the connections.
    /// </summary>
    public static IServiceCollection AddXCallServer(this IServiceCollection services, Action<IServiceProvider, XCallServer> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        services.AddOptions<XCallServerOptions>().BindConfiguration(ServerSection);
        services.AddSingleton<IHostedService>(provider => new XCallServerHost(
            provider,
            provider.GetRequiredService<IOptions<XCallServerOptions>>(),
            configure,
            provider.GetRequiredService<ILoggerFactory>()));
        return services;
    }

    /// <summary>The one <see cref="XCallClientStates"/> of <paramref name="services"/>, added with its first client.</summary>
    private static XCallClientStates ClientStates(IServiceCollection services)
    {
        if (services.FirstOrDefault(d => d.ServiceType == typeof(XCallClientStates))?.ImplementationInstance is XCallClientStates states)
        {
            return states;
        }
        states = new XCallClientStates();
        services.AddSingleton(states);
        return states;
    }

    private static RemoteService<T> Open<T>(XCallClientOptions options, ILogger logger, XCallClientStates states) where T : class
    {
        string contract = typeof(T).Name;
        string address = options.Address!;
        RemoteService<T> remote;
        try
        {
            remote = Remote.Open<T>(address, new RemoteOptions { Reconnect = options.Reconnect, PreferSharedMemory = options.PreferSharedMemory });
        }
        catch (ShmPeerRefusedException ex)
        {
            Log.PeerRefused(logger, contract, address, ex.Message, ex);
            states.Failed(contract, address, ex);
            throw;
        }
        catch (XCallException ex)
        {
            Log.ConnectFailed(logger, contract, address, ex);
            states.Failed(contract, address, ex);
            throw;
        }
        Log.Connected(logger, contract, address, remote.Transport);
        states.Opened(contract, address, remote.Transport, () => remote.State);
        bool lost = false;
        remote.StateChanged += (_, state, error) =>
        {
            switch (state)
            {
                case ConnectionState.Disconnected:
                    lost = true;
                    if (error is XCallProtocolException)
                    {
                        Log.ProtocolError(logger, contract, address, error);
                    }
                    Log.Reconnecting(logger, contract, address, error);
                    break;
                case ConnectionState.Connected when lost:
                    lost = false;
                    Log.Reconnected(logger, contract, address);
                    break;
                case ConnectionState.Closed when error is not null:
                    Log.Lost(logger, contract, address, error);
                    break;
            }
        };
        return remote;
    }
}
