using System.Diagnostics;
using XCall.Cluster;

namespace XCall.Channels.Distributed;

/// <summary>The worker's side of <see cref="IProcessRunner"/>: slots of its <see cref="WorkerHost"/>, processes run with its <see cref="CspWorld"/>.</summary>
internal sealed class ProcessRunner(WorkerHost host, CspWorld world, ProcessKinds kinds) : IProcessRunner
{
    /// <summary>How long a lease waits for its process before its slot is freed (a caller that died between the two calls).</summary>
    internal static readonly TimeSpan LeaseTimeout = TimeSpan.FromSeconds(30);

    // Design: _lock guards _leases (lease -> when it expires) and _next. A lease holds one slot of the host from
    // ReserveAsync until its RunAsync ends, its Release, or its expiry (swept at each reservation), so each slot
    // taken is returned exactly once: by whoever removes the lease from _leases, or by RunAsync's finally.
    private readonly Lock _lock = new();
    private readonly Dictionary<long, long> _leases = [];
    private long _next;

    public ValueTask<long> ReserveAsync(string program)
    {
        if (program != kinds.Program)
        {
            return ValueTask.FromResult(-1L);
        }
        long now = Stopwatch.GetTimestamp();
        lock (_lock)
        {
            foreach ((long lease, long expires) in _leases)
            {
                if (expires < now)
                {
                    _leases.Remove(lease);
                    host.ReturnSlot();
                }
            }
            if (!host.TryTakeSlot())
            {
                return ValueTask.FromResult(0L);
            }
            long taken = ++_next;
            _leases.Add(taken, now + (long)(LeaseTimeout.TotalSeconds * Stopwatch.Frequency));
            return ValueTask.FromResult(taken);
        }
    }

    public async Task RunAsync(long lease, byte[] process, CancellationToken cancellationToken)
    {
        lock (_lock)
        {
            if (!_leases.Remove(lease))
            {
                throw new InvalidOperationException($"Lease {lease} is unknown or expired on {host}: reserve a slot first.");
            }
        }
        try
        {
            IProcess read = kinds.Read(process);
            await CspWorld.RunInAsync(world, read, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            host.ReturnSlot();
        }
    }

    public void Release(long lease)
    {
        lock (_lock)
        {
            if (_leases.Remove(lease))
            {
                host.ReturnSlot();
            }
        }
    }
}
