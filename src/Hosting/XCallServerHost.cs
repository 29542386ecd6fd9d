using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using XCall.Runtime;

namespace XCall.Hosting;

/// <summary>
/// The hosted service of <see cref="XCallServiceCollectionExtensions.AddXCallServer"/>: serves on start; on stop,
/// stops accepting, waits until the clients closed their connections (a call in flight finishes), and closes the
/// ones still open when the host's shutdown timeout ends the wait.
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
        return Task.CompletedTask;
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (_server is not { } server)
        {
            return;
        }
        StopAccepting();
        XCallConnection[] open = [.. server.Connections];
        Log.Draining(_logger, open.Length);
        try
        {
            await Task.WhenAll(open.Select(WhenClosed)).WaitAsync(cancellationToken).ConfigureAwait(false);
            Log.Drained(_logger);
        }
        catch (OperationCanceledException)
        {
            Log.DrainCutShort(_logger, server.Connections.Count);
        }
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

    private static Task WhenClosed(XCallConnection connection)
    {
        var closed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        connection.Closed += (_, _) => closed.TrySetResult();
        if (connection.IsClosed)
        {
            closed.TrySetResult();
        }
        return closed.Task;
    }
}
