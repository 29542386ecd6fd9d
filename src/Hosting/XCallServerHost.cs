using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace XCall.Hosting;

/// <summary>
/// The hosted service of <see cref="XCallServiceCollectionExtensions.AddXCallServer"/>: serves on start; on stop,
/// stops accepting, refuses new calls (<see cref="XCallServerBusyException"/>), waits until the calls in flight are
/// answered (<see cref="XCallServer.DrainAsync"/>) or the host's shutdown timeout ends the wait, and closes the
/// connections.
/// </summary>
internal sealed class XCallServerHost(
    IServiceProvider services,
    IOptions<XCallServerOptions> options,
    Action<IServiceProvider, XCallServer> configure,
    ILoggerFactory loggerFactory) : IHostedService, IDisposable
{
    private readonly ILogger _logger = loggerFactory.CreateLogger(Log.Category);
    private readonly List<RemoteListener> _listeners = [];
    private XCallServer? _server;
    private volatile Phase _phase;

    /// <summary>Where the server is in its life (<see cref="XCallHealthCheck"/>).</summary>
    internal enum Phase
    {
        NotStarted,
        Serving,
        Draining,
        Stopped,
    }

    /// <summary>The addresses served (from the options).</summary>
    public IList<string> Addresses => options.Value.Addresses;

    /// <summary>The phase, the open connections and the calls in flight, read now.</summary>
    public (Phase Phase, int Connections, int Calls) Snapshot()
    {
        Phase phase = _phase;
        return _server is { } server && phase is Phase.Serving or Phase.Draining
            ? (phase, server.Connections.Count, server.CallsInFlight)
            : (phase, 0, 0);
    }

    public Task StartAsync(CancellationToken cancellationToken)
    {
        XCallServerOptions settings = options.Value;
        if (settings.Addresses.Count == 0)
        {
            throw new OptionsValidationException(nameof(XCallServerOptions), typeof(XCallServerOptions),
                ["XCall:Server:Addresses is empty: give the server at least one address (shm://name or tcp://host:port/name)."]);
        }
        _server = new XCallServer();
        configure(services, _server);
        var remote = new RemoteOptions { ServeSharedMemoryToo = settings.ServeSharedMemoryToo };
        foreach (string address in settings.Addresses)
        {
            _listeners.Add(Remote.Serve(address, _server, remote));
            Log.Serving(_logger, address);
        }
        _phase = Phase.Serving;
        return Task.CompletedTask;
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (_server is not { } server)
        {
            return;
        }
        _phase = Phase.Draining;
        StopAccepting();
        Task drained = server.DrainAsync(cancellationToken); // new calls are refused from here on
        Log.Draining(_logger, server.CallsInFlight, server.Connections.Count);
        try
        {
            await drained.ConfigureAwait(false);
            Log.Drained(_logger, server.Connections.Count);
        }
        catch (OperationCanceledException)
        {
            Log.DrainCutShort(_logger, server.CallsInFlight, server.Connections.Count);
        }
        _phase = Phase.Stopped;
        server.Dispose();
    }

    public void Dispose()
    {
        StopAccepting();
        _server?.Dispose();
    }

    private void StopAccepting()
    {
        foreach (RemoteListener listener in _listeners)
        {
            listener.Dispose();
        }
        _listeners.Clear();
    }
}
