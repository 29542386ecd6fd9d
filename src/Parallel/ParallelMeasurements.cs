namespace XCall.Parallel;

/// <summary>The grain measurements of one world: host time per contract, and the calibrated costs of a call.</summary>
internal sealed class ParallelMeasurements
{
    // Design: _lock guards _contracts and _probes; _contracts is updated once per batch answer, never per call, and
    // _probes once per contract (the first probe timed wins).
    private readonly object _lock = new();
    private readonly Dictionary<string, (long Calls, long Nanoseconds, double? Least)> _contracts = new(StringComparer.Ordinal);
    private readonly Dictionary<string, double> _probes = new(StringComparer.Ordinal);

    /// <summary>The host's mean time to dispatch a call that does nothing.</summary>
    public double DispatchNanoseconds { get; set; }

    /// <summary>What an aggregated one-way call costs its caller.</summary>
    public double CallerNanoseconds { get; set; }

    /// <summary>
    /// The fewest calls of a contract one batch must carry to count towards its least batch mean: a synchronous call
    /// travels alone, and a cheap getter of a coarse contract must not set its grain.
    /// </summary>
    internal const int LeastBatchCalls = 64;

    public void AddHostTime(string[] contracts, long[] calls, long[] nanoseconds)
    {
        lock (_lock)
        {
            for (int i = 0; i < contracts.Length; i++)
            {
                (long c, long n, double? least) = _contracts.GetValueOrDefault(contracts[i]);
                if (calls[i] >= LeastBatchCalls)
                {
                    least = Math.Min(least ?? double.MaxValue, (double)nanoseconds[i] / calls[i]);
                }
                _contracts[contracts[i]] = (c + calls[i], n + nanoseconds[i], least);
            }
        }
    }

    /// <summary>Keeps the time of a contract's grain probe; returns the one kept (an earlier one when two raced).</summary>
    public double AddProbe(string contract, double nanoseconds)
    {
        lock (_lock)
        {
            return _probes.TryAdd(contract, nanoseconds) ? nanoseconds : _probes[contract];
        }
    }

    public GrainMeasurement Measure(string contract)
    {
        lock (_lock)
        {
            (long calls, long nanoseconds, double? least) = _contracts.GetValueOrDefault(contract);
            return new GrainMeasurement(contract, calls, calls == 0 ? 0 : (double)nanoseconds / calls, DispatchNanoseconds, CallerNanoseconds)
            {
                ProbeNanoseconds = _probes.TryGetValue(contract, out double probe) ? probe : null,
                LeastBatchNanoseconds = least,
            };
        }
    }
}
