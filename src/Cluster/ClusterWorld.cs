using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using XCall.Cluster.Store;

namespace XCall.Cluster;

/// <summary>
/// The world this process belongs to: its rank and size from the launcher, every rank's address (wired up through
/// a store that rank 0 hosts), connections to peers opened on first use (shared memory on this node, TCP to other
/// nodes), the name directory, and the failure of any rank. Join once with <see cref="JoinAsync"/>; dispose to
/// leave, which waits for the other ranks to leave too (as <c>MPI_Finalize</c> does).
/// </summary>
public sealed partial class ClusterWorld : IAsyncDisposable
{
    // Design: _lock guards _peers, _failed and _leaving. _failure is completed once, with the first rank taken
    // for failed; callbacks (RankFailed, StateChanged handlers) never run under the lock. A peer whose connection
    // closes is taken for failed unless this rank is leaving or the store says the peer left: every rank records
    // its leave in the store before it closes anything, so a clean end is never reported as a failure.
    private readonly object _lock = new();
    private readonly ClusterOptions _options;
    private readonly RemoteOptions _remote;
    private readonly IClusterStore _store;
    private readonly ClusterStore? _localStore;
    private readonly XCallServer? _storeServer;
    private readonly RemoteListener? _storeListener;
    private readonly RemoteService<IClusterStore>? _storeService;
    private readonly RemoteListener _listener;
    private readonly PeerCard[] _cards;
    private readonly Dictionary<(int Rank, Type Contract), IDisposable> _peers = [];
    private readonly List<RankFailedException> _failed = [];
    private readonly TaskCompletionSource<RankFailedException> _failure = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _watchStop = new();
    private readonly MachineNameStore? _machineNames;
    private bool _leaving;

    private ClusterWorld(WorldEnvironment environment, ClusterOptions options, RemoteOptions remote, XCallServer server, RemoteListener listener,
        IClusterStore store, ClusterStore? localStore, XCallServer? storeServer, RemoteListener? storeListener, RemoteService<IClusterStore>? storeService, PeerCard[] cards)
    {
        Environment = environment;
        _options = options;
        _remote = remote;
        Server = server;
        _listener = listener;
        _store = store;
        _localStore = localStore;
        _storeServer = storeServer;
        _storeListener = storeListener;
        _storeService = storeService;
        _cards = cards;
        if (environment.Launcher == Launcher.None)
        {
            _machineNames = new MachineNameStore(remote.Shm.RuntimeDirectory);
            Names = new NameDirectory(_machineNames);
        }
        else
        {
            Names = new NameDirectory(new WorldNameStore(this));
        }
    }

    /// <summary>Who this process is, as its launcher said.</summary>
    public WorldEnvironment Environment { get; }

    /// <summary>This process's rank, 0 to <see cref="Size"/> - 1.</summary>
    public int Rank => Environment.Rank;

    /// <summary>How many ranks the world has.</summary>
    public int Size => Environment.Size;

    /// <summary>This process's index among the ranks of its node.</summary>
    public int LocalRank => Environment.LocalRank;

    /// <summary>The name of this process's node.</summary>
    public string Node => Environment.Node;

    /// <summary>The services this rank offers its peers (<see cref="OpenAsync{T}"/> on another rank reaches them): <see cref="ClusterOptions.Services"/>.</summary>
    public XCallServer Server { get; }

    /// <summary>The names every rank of the world resolves.</summary>
    public NameDirectory Names { get; }

    /// <summary>The ranks taken for failed so far, first failure first.</summary>
    public IReadOnlyList<RankFailedException> Failures
    {
        get
        {
            lock (_lock)
            {
                return [.. _failed];
            }
        }
    }

    /// <summary>
    /// Raised once per rank taken for failed (its process died, its heartbeat stopped, or its connections closed
    /// before it left), on the thread that saw it; keep handlers short.
    /// </summary>
    public event Action<ClusterWorld, RankFailedException>? RankFailed;

    /// <summary>The node of <paramref name="rank"/>.</summary>
    public string GetNode(int rank) => Card(rank).Node;

    /// <summary>The address <paramref name="rank"/> serves <see cref="Server"/> at: <c>shm://</c> when it runs on this node, <c>tcp://</c> otherwise.</summary>
    public string GetAddress(int rank)
    {
        PeerCard card = Card(rank);
        return card.Node == Node ? $"shm://{card.ShmName}" : card.TcpAddress;
    }

    /// <summary>
    /// The service of contract <typeparamref name="T"/> that <paramref name="rank"/> offers on its <see cref="Server"/>;
    /// the connection opens on the first call for that rank and contract and is kept for the life of the world.
    /// </summary>
    /// <exception cref="RankFailedException">The rank failed, or nothing answers at its address.</exception>
    public async Task<T> OpenAsync<T>(int rank, CancellationToken cancellationToken = default) where T : class
    {
        PeerCard card = Card(rank);
        ThrowIfFailed(rank);
        lock (_lock)
        {
            if (_peers.TryGetValue((rank, typeof(T)), out IDisposable? open))
            {
                return ((RemoteService<T>)open).Proxy;
            }
        }
        string address = GetAddress(rank);
        RemoteService<T> service;
        try
        {
            service = await Remote.OpenAsync<T>(address, _remote, cancellationToken).ConfigureAwait(false);
        }
        catch (XCallDisconnectedException e)
        {
            throw new RankFailedException(rank, $"nothing answers at its address {address} ({e.Reason})", e);
        }
        lock (_lock)
        {
            if (_peers.TryGetValue((rank, typeof(T)), out IDisposable? raced))
            {
                service.Dispose();
                return ((RemoteService<T>)raced).Proxy;
            }
            _peers[(rank, typeof(T))] = service;
        }
        // Reconnects are off, so the connection's Closed (not the service's StateChanged) says the peer is gone.
        Runtime.XCallConnection connection = service.Connection!;
        connection.Closed += (closed, error) => _ = OnPeerLostAsync(rank, card, error);
        if (connection.IsClosed)
        {
            _ = OnPeerLostAsync(rank, card, null);
        }
        return service.Proxy;
    }

    /// <summary>Throws the <see cref="RankFailedException"/> of <paramref name="rank"/> when it was taken for failed.</summary>
    public void ThrowIfFailed(int rank)
    {
        lock (_lock)
        {
            foreach (RankFailedException failure in _failed)
            {
                if (failure.Rank == rank)
                {
                    throw new RankFailedException(rank, failure.Reason, failure);
                }
            }
        }
    }

    /// <summary>
    /// Leaves the world: records this rank's end in the store, waits (at most <see cref="ClusterOptions.LeaveTimeout"/>)
    /// until every rank has left or failed, then closes this rank's connections and servers. Rank 0 waits last,
    /// because it holds the store.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        lock (_lock)
        {
            if (_leaving)
            {
                return;
            }
            _leaving = true;
        }
        using (var timeout = new CancellationTokenSource(_options.LeaveTimeout))
        {
            try
            {
                await _store.LeaveAsync(Rank, timeout.Token).ConfigureAwait(false);
                if (_storeServer is not null)
                {
                    await AllClosedAsync(_storeServer.Connections, timeout.Token).ConfigureAwait(false);
                }
            }
            catch (Exception e) when (e is OperationCanceledException or XCallException)
            {
                // A rank that never left, or a store that is gone: end this rank's part anyway.
            }
        }
        await _watchStop.CancelAsync().ConfigureAwait(false);
        CloseAll();
        _watchStop.Dispose();
    }

    private void CloseAll()
    {
        IDisposable[] peers;
        lock (_lock)
        {
            peers = [.. _peers.Values];
            _peers.Clear();
        }
        foreach (IDisposable peer in peers)
        {
            peer.Dispose();
        }
        _storeService?.Dispose();
        _listener.Dispose();
        Server.Dispose();
        _localStore?.Close();
        _storeListener?.Dispose();
        _storeServer?.Dispose();
        _machineNames?.Dispose();
    }

    /// <summary>Closes every connection and server at once without leaving, as the death of the process would (tests use it).</summary>
    internal void CloseWithoutLeaving()
    {
        lock (_lock)
        {
            _leaving = true; // this rank reports nothing more; its peers see it fail
        }
        CloseAll();
    }

    /// <summary>Calls the store; fails with the first rank failure (when the store is rank 0's and it is gone, with rank 0's).</summary>
    internal async Task<TResult> CallStoreAsync<TResult>(Func<IClusterStore, Task<TResult>> call, CancellationToken cancellationToken)
    {
        Task<TResult> task;
        try
        {
            task = call(_store);
        }
        catch (XCallDisconnectedException e)
        {
            throw MarkFailed(0, $"its store is unreachable ({e.Reason})", e);
        }
        Task<RankFailedException> failure = _failure.Task;
        if (await Task.WhenAny(task, failure).ConfigureAwait(false) == failure)
        {
            _ = task.ContinueWith(static t => _ = t.Exception, CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted, TaskScheduler.Default);
            RankFailedException first = failure.Result;
            throw new RankFailedException(first.Rank, first.Reason, first);
        }
        try
        {
            return await task.ConfigureAwait(false);
        }
        catch (XCallDisconnectedException e)
        {
            throw MarkFailed(0, $"its store is unreachable ({e.Reason})", e);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested && _failure.Task.IsCompleted)
        {
            RankFailedException first = _failure.Task.Result;
            throw new RankFailedException(first.Rank, first.Reason, first);
        }
    }

    private PeerCard Card(int rank)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)rank, (uint)Size, nameof(rank));
        return _cards[rank];
    }

    private async Task OnPeerLostAsync(int rank, PeerCard card, Exception? error)
    {
        lock (_lock)
        {
            if (_leaving)
            {
                return;
            }
        }
        bool left;
        try
        {
            left = await CallStoreAsync(store => store.HasLeftAsync(rank), CancellationToken.None).ConfigureAwait(false);
        }
        catch (XCallException)
        {
            left = false; // the store is gone too, or another rank failed first
        }
        if (!left)
        {
            string why = error is XCallDisconnectedException lost ? lost.Reason : error?.Message ?? "the connection closed";
            MarkFailed(rank, $"its connection at {card.TcpAddress} closed ({why})", error);
        }
    }

    /// <summary>Takes <paramref name="rank"/> for failed (once) and returns its exception.</summary>
    private RankFailedException MarkFailed(int rank, string reason, Exception? inner)
    {
        RankFailedException failure;
        lock (_lock)
        {
            foreach (RankFailedException known in _failed)
            {
                if (known.Rank == rank)
                {
                    return new RankFailedException(rank, known.Reason, known);
                }
            }
            failure = new RankFailedException(rank, reason, inner);
            _failed.Add(failure);
        }
        _failure.TrySetResult(failure);
        _localStore?.Fail(rank, reason);
        RankFailed?.Invoke(this, failure);
        return new RankFailedException(rank, reason, failure);
    }

    /// <summary>Rank 0 waits for the other ranks to close their store connections before it stops serving the store.</summary>
    private static Task AllClosedAsync(IReadOnlyCollection<Runtime.XCallConnection> connections, CancellationToken cancellationToken)
    {
        var closed = new List<Task>();
        foreach (Runtime.XCallConnection connection in connections)
        {
            var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            connection.Closed += (_, _) => done.TrySetResult();
            if (connection.IsClosed)
            {
                done.TrySetResult();
            }
            closed.Add(done.Task);
        }
        return Task.WhenAll(closed).WaitAsync(cancellationToken);
    }
}
