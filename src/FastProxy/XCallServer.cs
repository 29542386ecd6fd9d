using XCall.Runtime;
using XCall.Transport;

namespace XCall;

/// <summary>
/// Serves a set of <see cref="RemotableAttribute"/> services to every connection a transport accepts:
/// many clients at once, each on its own <see cref="XCallConnection"/>; a client that dies or sends a
/// malformed frame loses only its own connection.
/// </summary>
public sealed class XCallServer : IDisposable
{
    private readonly object _lock = new();
    private readonly HashSet<XCallConnection> _connections = [];
    private bool _disposed;
    private bool _draining;

    /// <summary>Creates a server whose connections use <paramref name="options"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">A bound of <paramref name="options"/> is out of its range.</exception>
    public XCallServer(ConnectionOptions? options = null)
    {
        Options = options ?? ConnectionOptions.Default;
        Options.Validate(); // here, not at the first connection a client opens
    }

    /// <summary>Settings of every connection.</summary>
    public ConnectionOptions Options { get; }

    /// <summary>The services offered.</summary>
    public ServiceTable Services { get; } = new();

    /// <summary>The open connections.</summary>
    public IReadOnlyCollection<XCallConnection> Connections
    {
        get
        {
            lock (_lock)
            {
                return [.. _connections];
            }
        }
    }

    /// <summary>Calls received on every open connection and not answered yet.</summary>
    public int CallsInFlight => Connections.Sum(c => c.CallsInFlight);

    /// <summary>
    /// Graceful shutdown: from now on every connection, open or attached later, refuses new calls (their callers get
    /// <see cref="XCallServerBusyException"/>, the call not run, so safe to retry elsewhere) except one-way calls and
    /// callbacks nested in a call of this side; completes when every call in flight has been answered (or its
    /// connection closed). Stop accepting connections first. <paramref name="cancellationToken"/> ends the wait, not
    /// the calls: dispose the server then to close the connections.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled before the calls finished.</exception>
    public Task DrainAsync(CancellationToken cancellationToken = default)
    {
        XCallConnection[] open;
        lock (_lock)
        {
            _draining = true;
            open = [.. _connections];
        }
        return Task.WhenAll(open.Select(c => Task.WhenAny(c.BeginDrain(), WhenClosed(c)))).WaitAsync(cancellationToken);
    }

    /// <summary>Offers <paramref name="service"/> as contract <typeparamref name="T"/>.</summary>
    public XCallServer Add<T>(T service) where T : class
    {
        Services.Add(service);
        return this;
    }

    /// <summary>Offers contract <typeparamref name="T"/> with per-call activation: a new instance from <paramref name="factory"/> for every call.</summary>
    public XCallServer AddPerCall<T>(Func<T> factory) where T : class
    {
        Services.AddPerCall(factory);
        return this;
    }

    /// <summary>Serves the services on an accepted channel; the connection is dropped from <see cref="Connections"/> when it closes.</summary>
    public XCallConnection Attach(FrameChannel channel)
    {
        var connection = new XCallConnection(channel, Options) { Services = Services };
        lock (_lock)
        {
            if (_disposed)
            {
                channel.Dispose();
                throw new ObjectDisposedException(nameof(XCallServer));
            }
            _connections.Add(connection);
            if (_draining)
            {
                _ = connection.BeginDrain();
            }
        }
        connection.Closed += (c, _) =>
        {
            lock (_lock)
            {
                _connections.Remove(c);
            }
        };
        try
        {
            connection.Start();
        }
        catch
        {
            lock (_lock)
            {
                _connections.Remove(connection);
            }
            connection.Dispose();
            throw;
        }
        return connection;
    }

    /// <summary>
    /// Accepts channels with <paramref name="accept"/> and serves each until cancelled or the server is disposed.
    /// A channel that fails to start (its peer went away at once) is dropped; the loop goes on.
    /// </summary>
    public async Task ServeAsync(Func<CancellationToken, ValueTask<FrameChannel>> accept, CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            FrameChannel channel;
            try
            {
                channel = await accept(cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return;
            }
            try
            {
                Attach(channel);
            }
            catch (ObjectDisposedException)
            {
                return; // the server was disposed
            }
            catch (Exception)
            {
                // This channel only (Attach disposed it); one peer that failed must not end serving the others.
            }
        }
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

    /// <summary>Closes every connection.</summary>
    public void Dispose()
    {
        XCallConnection[] open;
        lock (_lock)
        {
            _disposed = true;
            open = [.. _connections];
        }
        foreach (XCallConnection connection in open)
        {
            connection.Dispose();
        }
    }
}
