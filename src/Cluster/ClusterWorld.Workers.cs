using System.Globalization;

namespace XCall.Cluster;

public sealed partial class ClusterWorld
{
    private const string WorkerPrefix = "xcall-worker/";

    /// <summary>
    /// The worker hosts of <paramref name="pool"/> (null: <see cref="WorkerHost.PoolVariable"/>, else <c>default</c>)
    /// that this process can use now: the other ranks of this world serving as workers, the <c>xcall worker</c>
    /// processes of this machine, and the addresses listed in <see cref="WorkerHost.AddressesVariable"/>.
    /// </summary>
    /// <exception cref="RankFailedException">Rank 0, which holds the world's names, failed.</exception>
    public async Task<IReadOnlyList<WorkerInfo>> FindWorkersAsync(string? pool = null, CancellationToken cancellationToken = default)
    {
        pool = WorkerHost.PoolOf(pool);
        var found = new List<WorkerInfo>();
        if (_machineNames is null)
        {
            for (int rank = 0; rank < Size; rank++)
            {
                if (rank != Rank && await Names.LookUpAsync(WorkerEntry(pool, RankWorkerName(rank)), cancellationToken).ConfigureAwait(false) is { } card)
                {
                    found.Add(WorkerOf(RankWorkerName(rank), card));
                }
            }
        }
        using (var machine = _machineNames is null ? new MachineNameStore(_remote.Shm.RuntimeDirectory) : null)
        {
            string mine = WorkerName();
            foreach ((string name, string card) in (machine ?? _machineNames!).List(WorkerEntry(pool, "")))
            {
                string worker = name[(WorkerPrefix.Length + pool.Length + 1)..];
                try
                {
                    if (worker != mine)
                    {
                        found.Add(WorkerOf(worker, card));
                    }
                }
                catch (FormatException)
                {
                    // Not an entry a worker host wrote (any process of this user can write the directory): not a worker.
                }
            }
        }
        foreach (string address in (System.Environment.GetEnvironmentVariable(WorkerHost.AddressesVariable) ?? "").Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            found.Add(new WorkerInfo(address, address, 0));
        }
        return found;
    }

    /// <summary>
    /// Waits until every other rank of this world serves as a worker of <paramref name="pool"/>, and returns them
    /// (for a program whose rank 0 ships processes to the others; in a world of one, at once and empty).
    /// </summary>
    /// <exception cref="TimeoutException">Some rank did not start its worker host within <paramref name="timeout"/>.</exception>
    /// <exception cref="RankFailedException">A rank failed while waiting.</exception>
    public async Task<IReadOnlyList<WorkerInfo>> WaitForWorkerRanksAsync(TimeSpan timeout, string? pool = null, CancellationToken cancellationToken = default)
    {
        pool = WorkerHost.PoolOf(pool);
        var workers = new List<WorkerInfo>();
        for (int rank = 0; rank < Size; rank++)
        {
            if (rank != Rank)
            {
                string card = await Names.WaitForAsync(WorkerEntry(pool, RankWorkerName(rank)), timeout, cancellationToken).ConfigureAwait(false);
                workers.Add(WorkerOf(RankWorkerName(rank), card));
            }
        }
        return workers;
    }

    /// <summary>The name this process's worker host is announced under: its rank in a launched world, its pid and node in a world of one.</summary>
    internal string WorkerName() => _machineNames is null
        ? RankWorkerName(Rank)
        : string.Create(CultureInfo.InvariantCulture, $"pid{System.Environment.ProcessId}@{Node}");

    internal static string WorkerEntry(string pool, string worker) => $"{WorkerPrefix}{pool}/{worker}";

    /// <summary>What a worker host announces: this rank's card and its slots.</summary>
    internal string WorkerCard(int slots) => string.Create(CultureInfo.InvariantCulture, $"{Card(Rank)}\n{slots}");

    private static string RankWorkerName(int rank) => string.Create(CultureInfo.InvariantCulture, $"rank{rank}");

    private WorkerInfo WorkerOf(string name, string text)
    {
        int last = text.LastIndexOf('\n');
        if (last < 0 || !int.TryParse(text.AsSpan(last + 1), NumberStyles.None, CultureInfo.InvariantCulture, out int slots))
        {
            throw new FormatException($"Worker {name} announced a malformed entry: '{text}'.");
        }
        PeerCard card = PeerCard.Parse(-1, text[..last]);
        return new WorkerInfo(name, card.Node == Node ? $"shm://{card.ShmName}" : card.TcpAddress, slots);
    }
}
