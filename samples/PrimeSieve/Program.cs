using System.Diagnostics;
using System.Globalization;
using XCall;
using XCall.Parallel;

// ParC#'s prime sieve: a pipeline of filter objects placed round the ranks. Rank 0 finds the primes up to
// sqrt(N) and deals them out to the filters; then it streams the candidates sqrt(N)+1 .. N into the first filter,
// each filter drops the multiples of its primes and passes the rest on with one-way calls; what leaves the last
// filter is prime. --grain G sends G candidates per call (hand-tuned grain); --grain 1 sends one per call and
// leaves the grouping to call aggregation.
// --adaptive lets the object manager agglomerate filters by their measured grain (Agglomeration.Adaptive, with a
// grain probe: a filter given the first share of the small primes, timed on one candidate after another, since
// every filter is created before any call was measured); by default they go where the placement puts them.
// Run: xcall run -n 4 -- dotnet XCall.Samples.PrimeSieve.dll [--n 10000000] [--filters 8] [--grain 1] [--adaptive]
int n = Option("--n", 10_000_000);
int filters = Option("--filters", 8);
int grain = Option("--grain", 1);
var ready = new TaskCompletionSource<ParallelWorld>();
bool adaptive = args.Contains("--adaptive");
int root = (int)Math.Sqrt(n);
int[] small = SmallPrimes(root);
var types = new ParallelTypes().Add<IPrimeFilter>(() => new PrimeFilter(ready.Task), adaptive ? Agglomeration.Adaptive : Agglomeration.Never)
    .SetGrainProbe<IPrimeFilter>(filter =>
    {
        filter.Connect(Share(0), null);
        int candidate = root;
        return () => filter.Process(++candidate);
    });
// Filters go to the ranks in contiguous blocks (0, 0, 1, 1, 2, 2 for six on three ranks): neighbouring stages share a
// process, so a candidate crosses between processes size - 1 times, not once per stage.
var blocks = new BlockPlacement(filters);
await using ParallelWorld world = await ParallelWorld.JoinAsync(types, new ParallelWorldOptions { Placement = blocks });
ready.SetResult(world);
if (world.Rank != 0)
{
    return;
}

var start = Stopwatch.GetTimestamp();
var pipeline = new IPrimeFilter[filters];
for (int i = 0; i < filters; i++)
{
    pipeline[i] = await world.CreateAsync<IPrimeFilter>();
}
for (int i = 0; i < filters; i++)
{
    pipeline[i].Connect(Share(i), i + 1 < filters ? world.RefOf(pipeline[i + 1]) : null);
}
IPrimeFilter first = pipeline[0];
var chunk = new List<int>(grain);
for (int candidate = root + 1; candidate <= n; candidate++)
{
    if (grain == 1)
    {
        first.Process(candidate);
        continue;
    }
    chunk.Add(candidate);
    if (chunk.Count == grain)
    {
        first.ProcessMany([.. chunk]);
        chunk.Clear();
    }
}
if (chunk.Count > 0)
{
    first.ProcessMany([.. chunk]);
}
long primes = small.Length + first.Drain();
double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
string where = string.Join(",", pipeline.Select(f => world.RefOf(f).Rank));
Console.WriteLine($"{primes} primes up to {n} in {seconds:F3} s: {filters} filters on ranks {where}, grain {grain}");
if (adaptive)
{
    GrainMeasurement measured = world.Measure<IPrimeFilter>();
    Console.WriteLine($"grain probe {measured.ProbeNanoseconds:F0} ns, measured {measured.GrainNanoseconds:F0} ns over {measured.Calls} calls, overhead {measured.OverheadNanoseconds:F0} ns");
}

// Filter i's primes: every filters-th small prime from the i-th.
int[] Share(int i) => [.. small.Where((_, index) => index % filters == i)];

int Option(string name, int fallback)
{
    int at = Array.IndexOf(args, name);
    return at >= 0 ? int.Parse(args[at + 1], CultureInfo.InvariantCulture) : fallback;
}

static int[] SmallPrimes(int limit)
{
    var composite = new bool[limit + 1];
    var found = new List<int>();
    for (int i = 2; i <= limit; i++)
    {
        if (!composite[i])
        {
            found.Add(i);
            for (long m = (long)i * i; m <= limit; m += i)
            {
                composite[m] = true;
            }
        }
    }
    return [.. found];
}

/// <summary>Object k of <c>count</c> on rank k * size / count: contiguous blocks, in rank order.</summary>
internal sealed class BlockPlacement(int count) : PlacementPolicy
{
    public override ValueTask<int> PlaceAsync(PlacementContext context, CancellationToken cancellationToken) =>
        ValueTask.FromResult((int)(context.Sequence % count * context.Size / count));
}

/// <summary>One stage of the sieve.</summary>
[Remotable]
public interface IPrimeFilter
{
    /// <summary>Gives the filter its primes and the next stage (null for the last, which counts what reaches it).</summary>
    void Connect(int[] primes, ParallelRef? next);

    /// <summary>One candidate.</summary>
    [OneWay]
    void Process(int candidate);

    /// <summary>Several candidates.</summary>
    [OneWay]
    void ProcessMany(int[] candidates);

    /// <summary>Waits until every candidate sent so far went through the rest of the pipeline; the count that passed it all.</summary>
    long Drain();
}

/// <summary>A stage: drops the multiples of its primes, passes the rest on in the order they came.</summary>
internal sealed class PrimeFilter(Task<ParallelWorld> world) : IPrimeFilter
{
    private int[] _primes = [];
    private IPrimeFilter? _next;
    private long _passed;

    public void Connect(int[] primes, ParallelRef? next)
    {
        _primes = primes;
        _next = next is { } where ? world.Result.Attach<IPrimeFilter>(where) : null;
    }

    public void Process(int candidate)
    {
        foreach (int p in _primes)
        {
            if (candidate % p == 0)
            {
                return;
            }
        }
        if (_next is null)
        {
            _passed++;
        }
        else
        {
            _next.Process(candidate);
        }
    }

    public void ProcessMany(int[] candidates)
    {
        var kept = new List<int>(candidates.Length);
        foreach (int candidate in candidates)
        {
            if (Passes(candidate))
            {
                kept.Add(candidate);
            }
        }
        if (_next is null)
        {
            _passed += kept.Count;
        }
        else if (kept.Count > 0)
        {
            _next.ProcessMany([.. kept]);
        }
    }

    public long Drain() => _next?.Drain() ?? _passed;

    private bool Passes(int candidate)
    {
        foreach (int p in _primes)
        {
            if (candidate % p == 0)
            {
                return false;
            }
        }
        return true;
    }
}
