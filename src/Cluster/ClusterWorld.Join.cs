using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using XCall.Cluster.Store;

namespace XCall.Cluster;

public sealed partial class ClusterWorld
{
    /// <summary>
    /// Joins the world the environment describes: serves <see cref="Server"/> on TCP and shared memory, hosts the
    /// store (rank 0) or connects to it (the others, retrying until rank 0 listens), publishes this rank's
    /// addresses and waits until every rank has published its own. A process started alone joins a world of one.
    /// </summary>
    /// <exception cref="TimeoutException">The store or some rank did not answer within <see cref="ClusterOptions.JoinTimeout"/>.</exception>
    /// <exception cref="RankFailedException">A rank failed while the world was joining.</exception>
    /// <exception cref="InvalidOperationException">The world spans nodes and the environment gives no store address (set <c>XCALL_STORE</c>).</exception>
    public static async Task<ClusterWorld> JoinAsync(ClusterOptions? options = null, CancellationToken cancellationToken = default)
    {
        options ??= ClusterOptions.Default;
        WorldEnvironment environment = options.Environment ?? WorldEnvironment.Detect();
        RemoteOptions remote = options.Remote with { Reconnect = false };
        using var timeout = new CancellationTokenSource(options.JoinTimeout);
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token, cancellationToken);
        var disposables = new Stack<IDisposable>();
        try
        {
            if (environment.Size > 1 && environment.StoreAddress is null)
            {
                throw new InvalidOperationException(
                    $"Rank {environment.Rank} of {environment.Size} ({environment.Launcher}) cannot find rank 0's store: the world spans nodes and the environment names no store. Set {WorldEnvironment.StoreVariable}=tcp://host:port/name.");
            }
            (string bindHost, string publishHost) = Hosts(options.Host ?? environment.Host, environment.OneNode);
            string shmName = $"xcall-{WorldEnvironment.SafeName(environment.JobId)}-rank{environment.Rank}";
            XCallServer server = options.Services ?? new XCallServer(remote.Connection);
            disposables.Push(server);
            RemoteListener listener = Remote.Serve($"tcp://{bindHost}:0/{shmName}", server, remote with { ServeSharedMemoryToo = true });
            disposables.Push(listener);
            var card = new PeerCard(environment.Node, $"tcp://{publishHost}:{listener.TcpAddress!.Port}/{shmName}", shmName);

            IClusterStore store;
            ClusterStore? localStore = null;
            XCallServer? storeServer = null;
            RemoteListener? storeListener = null;
            RemoteService<IClusterStore>? storeService = null;
            if (environment.Rank == 0)
            {
                store = localStore = new ClusterStore(environment.Size);
                if (environment.Size > 1)
                {
                    storeServer = new XCallServer(remote.Connection).Add<IClusterStore>(localStore);
                    disposables.Push(storeServer);
                    storeListener = Remote.Serve(StoreServeAddress(environment), storeServer, remote);
                    disposables.Push(storeListener);
                }
            }
            else
            {
                string address = environment.StoreAddress!;
                storeService = await ConnectStoreAsync(address, remote, options.JoinTimeout, linked.Token).ConfigureAwait(false);
                disposables.Push(storeService);
                store = storeService.Proxy;
            }

            JoinReply reply;
            try
            {
                reply = await store.JoinAsync(environment.Rank, environment.Size, card.ToString(), linked.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
            {
                throw new TimeoutException($"Rank {environment.Rank}: not every rank of {environment.Size} joined within {options.JoinTimeout}.");
            }
            if (reply.FailedRank >= 0)
            {
                throw new RankFailedException(reply.FailedRank, reply.Reason);
            }
            PeerCard[] cards = [.. reply.Cards.Select((text, rank) => PeerCard.Parse(rank, text))];
            var world = new ClusterWorld(environment, options, remote, server, listener, store, localStore, storeServer, storeListener, storeService, cards);
            world.StartWatching(storeService);
            return world;
        }
        catch
        {
            while (disposables.Count > 0)
            {
                disposables.Pop().Dispose();
            }
            throw;
        }
    }

    /// <summary>
    /// Rank 0's watch on the store's failures; the other ranks' call that holds their liveness in the store and
    /// tells them of any failure, and their store connection's loss, which is rank 0's failure.
    /// </summary>
    private void StartWatching(RemoteService<IClusterStore>? storeService)
    {
        if (_localStore is not null)
        {
            _localStore.RankFailed += (rank, reason) => MarkFailed(rank, reason, null);
            return;
        }
        storeService!.Connection!.Closed += (_, error) =>
        {
            if (!IsLeaving)
            {
                MarkFailed(0, $"its store connection closed ({(error as XCallDisconnectedException)?.Reason ?? error?.Message ?? "closed"})", error);
            }
        };
        _ = WatchAsync();
    }

    private async Task WatchAsync()
    {
        try
        {
            int failed = await _store.WatchAsync(Rank, _watchStop.Token).ConfigureAwait(false);
            if (failed >= 0)
            {
                MarkFailed(failed, "the store (rank 0) reports it failed", null);
            }
        }
        catch (OperationCanceledException)
        {
            // This rank stopped watching: it left.
        }
        catch (XCallException e) when (!IsLeaving)
        {
            MarkFailed(0, $"its store stopped answering ({(e as XCallDisconnectedException)?.Reason ?? e.Message})", e);
        }
        catch (XCallException)
        {
            // Leaving: the store closing is expected.
        }
    }

    private bool IsLeaving
    {
        get
        {
            lock (_lock)
            {
                return _leaving;
            }
        }
    }

    private static async Task<RemoteService<IClusterStore>> ConnectStoreAsync(string address, RemoteOptions remote, TimeSpan joinTimeout, CancellationToken cancellationToken)
    {
        // Rank 0 may not listen yet: retry with a growing pause until the join's deadline (the token) passes.
        TimeSpan pause = TimeSpan.FromMilliseconds(10);
        Exception? last = null;
        while (true)
        {
            try
            {
                return await Remote.OpenAsync<IClusterStore>(address, remote, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is XCallDisconnectedException or SocketException or IOException && !cancellationToken.IsCancellationRequested)
            {
                last = e;
            }
            catch (OperationCanceledException)
            {
                break;
            }
            try
            {
                await Task.Delay(pause, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                break;
            }
            pause = TimeSpan.FromTicks(Math.Min(pause.Ticks * 2, TimeSpan.FromMilliseconds(250).Ticks));
        }
        throw new TimeoutException($"Rank 0's store at {address} did not answer within {joinTimeout}.", last);
    }

    /// <summary>Where rank 0 serves the store: a TCP store on a named host listens on every interface; shm and IP addresses as given.</summary>
    private static string StoreServeAddress(WorldEnvironment environment)
    {
        string address = environment.StoreAddress!;
        XCallAddress parsed = XCallAddress.Parse(address);
        if (parsed.Scheme == "tcp" && parsed.Host is { } host && host != "localhost" && !IPAddress.TryParse(host, out _))
        {
            return $"tcp://0.0.0.0:{parsed.Port}/{parsed.Name}";
        }
        return address;
    }

    /// <summary>The host this rank's TCP server binds to and the host it publishes.</summary>
    private static (string Bind, string Publish) Hosts(string? host, bool oneNode)
    {
        if (host is null)
        {
            return oneNode ? ("127.0.0.1", "127.0.0.1") : ("0.0.0.0", Dns.GetHostName());
        }
        return IPAddress.TryParse(host, out _) ? (host, host) : ("0.0.0.0", host);
    }
}
