namespace XCall.Cluster.Store;

/// <summary>The store rank 0 hosts (and calls directly); the other ranks reach it through <see cref="IClusterStore"/>.</summary>
internal sealed class ClusterStore : IClusterStore
{
    // Design: one private lock guards every field below; no method awaits or completes a task while holding it.
    // Completions are collected under the lock and run after it (TrySetResult with RunContinuationsAsynchronously
    // besides), so a continuation never runs inside the lock. Invariants: a rank is in at most one of _left and
    // _failed; once a rank failed, every join waiter and watch is completed with it and later joins and watches
    // complete at once with the first failure; leave waiters complete when every rank is in _left or _failed; a
    // key's waiters exist only while the key is unset; once _closed, no rank is taken for failed.
    private readonly object _lock = new();
    private readonly int _size;
    private readonly string?[] _cards;
    private int _joined;
    private readonly List<TaskCompletionSource<JoinReply>> _joinWaiters = [];
    private readonly Dictionary<int, TaskCompletionSource<int>> _watches = [];
    private readonly HashSet<int> _left = [];
    private readonly List<(int Rank, string Reason)> _failed = [];
    private readonly List<TaskCompletionSource<int>> _leaveWaiters = [];
    private readonly Dictionary<string, string> _values = new(StringComparer.Ordinal);
    private readonly Dictionary<string, List<TaskCompletionSource<string>>> _keyWaiters = new(StringComparer.Ordinal);
    private bool _closed;

    public ClusterStore(int size)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(size, 1);
        _size = size;
        _cards = new string?[size];
    }

    /// <summary>Raised, outside the lock, when a rank is taken for failed.</summary>
    public event Action<int, string>? RankFailed;

    public Task<JoinReply> JoinAsync(int rank, int size, string card, CancellationToken cancellationToken)
    {
        CheckRank(rank);
        if (size != _size)
        {
            throw new InvalidOperationException($"rank {rank} joins a world of {size} ranks, but rank 0's world has {_size}.");
        }
        TaskCompletionSource<JoinReply>[] complete = [];
        var waiter = new TaskCompletionSource<JoinReply>(TaskCreationOptions.RunContinuationsAsynchronously);
        JoinReply? reply;
        lock (_lock)
        {
            if (_cards[rank] is null)
            {
                _joined++;
            }
            _cards[rank] = card;
            reply = ReplyUnsynchronized();
            if (reply is null)
            {
                _joinWaiters.Add(waiter);
            }
            else if (_failed.Count == 0)
            {
                complete = [.. _joinWaiters];
                _joinWaiters.Clear();
            }
        }
        foreach (TaskCompletionSource<JoinReply> other in complete)
        {
            other.TrySetResult(reply!);
        }
        if (reply is not null)
        {
            return Task.FromResult(reply);
        }
        return WaitCancellable(waiter, cancellationToken, () => Remove(_joinWaiters, waiter));
    }

    public Task<int> WatchAsync(int rank, CancellationToken cancellationToken)
    {
        CheckRank(rank);
        var watch = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            if (_failed.Count > 0)
            {
                return Task.FromResult(_failed[0].Rank);
            }
            if (_left.Contains(rank))
            {
                return Task.FromResult(-1);
            }
            _watches[rank] = watch;
        }
        cancellationToken.Register(() =>
        {
            // The connection of the rank closed (the server cancels its calls then), or the rank cancelled its watch.
            if (watch.TrySetCanceled(cancellationToken))
            {
                Fail(rank, "its connection to the store (rank 0) closed before it left the world");
            }
        });
        return watch.Task;
    }

    public Task<int> LeaveAsync(int rank, CancellationToken cancellationToken)
    {
        CheckRank(rank);
        TaskCompletionSource<int>? watch;
        TaskCompletionSource<int>[] complete = [];
        var waiter = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        int result = 0;
        bool done;
        lock (_lock)
        {
            bool failed = _failed.Exists(f => f.Rank == rank);
            if (!failed)
            {
                _left.Add(rank);
            }
            _watches.Remove(rank, out watch);
            done = _left.Count + _failed.Count == _size;
            if (done)
            {
                result = _failed.Count > 0 ? _failed[0].Rank : -1;
                complete = [.. _leaveWaiters];
                _leaveWaiters.Clear();
            }
            else
            {
                _leaveWaiters.Add(waiter);
            }
        }
        watch?.TrySetResult(-1);
        foreach (TaskCompletionSource<int> other in complete)
        {
            other.TrySetResult(result);
        }
        return done ? Task.FromResult(result) : WaitCancellable(waiter, cancellationToken, () => Remove(_leaveWaiters, waiter));
    }

    public Task<bool> HasLeftAsync(int rank)
    {
        lock (_lock)
        {
            return Task.FromResult(_left.Contains(rank));
        }
    }

    public Task<string> AddAsync(string key, string value)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(value);
        List<TaskCompletionSource<string>>? waiters;
        lock (_lock)
        {
            if (_values.TryGetValue(key, out string? existing))
            {
                return Task.FromResult(existing);
            }
            _values[key] = value;
            _keyWaiters.Remove(key, out waiters);
        }
        foreach (TaskCompletionSource<string> waiter in waiters ?? [])
        {
            waiter.TrySetResult(value);
        }
        return Task.FromResult(value);
    }

    public Task<string?> GetAsync(string key)
    {
        lock (_lock)
        {
            return Task.FromResult(_values.GetValueOrDefault(key));
        }
    }

    public Task<string> WaitAsync(string key, CancellationToken cancellationToken)
    {
        var waiter = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            if (_values.TryGetValue(key, out string? value))
            {
                return Task.FromResult(value);
            }
            if (!_keyWaiters.TryGetValue(key, out List<TaskCompletionSource<string>>? waiters))
            {
                _keyWaiters[key] = waiters = [];
            }
            waiters.Add(waiter);
        }
        return WaitCancellable(waiter, cancellationToken, () =>
        {
            if (_keyWaiters.TryGetValue(key, out List<TaskCompletionSource<string>>? waiters) && waiters.Remove(waiter) && waiters.Count == 0)
            {
                _keyWaiters.Remove(key);
            }
        });
    }

    /// <summary>Takes <paramref name="rank"/> for failed (once): joins, leaves and the other ranks' watches learn of it.</summary>
    public void Fail(int rank, string reason)
    {
        TaskCompletionSource<JoinReply>[] joins;
        TaskCompletionSource<int>[] watches;
        TaskCompletionSource<int>[] leaves = [];
        int first;
        lock (_lock)
        {
            if (_closed || _left.Contains(rank) || _failed.Exists(f => f.Rank == rank))
            {
                return;
            }
            _failed.Add((rank, reason));
            first = _failed[0].Rank;
            joins = [.. _joinWaiters];
            _joinWaiters.Clear();
            watches = [.. _watches.Values];
            _watches.Clear();
            if (_left.Count + _failed.Count == _size)
            {
                leaves = [.. _leaveWaiters];
                _leaveWaiters.Clear();
            }
        }
        var reply = new JoinReply([], rank, reason);
        foreach (TaskCompletionSource<JoinReply> join in joins)
        {
            join.TrySetResult(reply);
        }
        foreach (TaskCompletionSource<int> watch in watches)
        {
            watch.TrySetResult(rank);
        }
        foreach (TaskCompletionSource<int> leave in leaves)
        {
            leave.TrySetResult(first);
        }
        RankFailed?.Invoke(rank, reason);
    }

    /// <summary>
    /// Stops taking ranks for failed: rank 0 is closing the store, and the watches its closing cancels say nothing
    /// about their ranks.
    /// </summary>
    public void Close()
    {
        lock (_lock)
        {
            _closed = true;
        }
    }

    private JoinReply? ReplyUnsynchronized()
    {
        if (_failed.Count > 0)
        {
            return new JoinReply([], _failed[0].Rank, _failed[0].Reason);
        }
        return _joined == _size ? new JoinReply([.. _cards.Select(c => c!)], -1, "") : null;
    }

    private void CheckRank(int rank) => ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)rank, (uint)_size, nameof(rank));

    private static bool Remove<T>(List<TaskCompletionSource<T>> waiters, TaskCompletionSource<T> waiter) => waiters.Remove(waiter);

    /// <summary>The waiter's task, cancelled (and taken out of its list under the lock) when the token is.</summary>
    private Task<T> WaitCancellable<T>(TaskCompletionSource<T> waiter, CancellationToken cancellationToken, Action removeUnsynchronized)
    {
        if (cancellationToken.CanBeCanceled)
        {
            CancellationTokenRegistration registration = cancellationToken.Register(() =>
            {
                lock (_lock)
                {
                    removeUnsynchronized();
                }
                waiter.TrySetCanceled(cancellationToken);
            });
            _ = waiter.Task.ContinueWith(_ => registration.Dispose(), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
        return waiter.Task;
    }
}
