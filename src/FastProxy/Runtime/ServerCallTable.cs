using XCall.Runtime.CompilerServices;
namespace XCall.Runtime;

/// <summary>
/// The calls a connection received and has not answered: pooled <see cref="ServerCall"/>s, and the ones that
/// outlive their dispatch (queued, running asynchronously), found by call id when a cancel frame names them.
/// </summary>
// Design: a call that completes while it is dispatched (the common case) takes the spare with one interlocked
// exchange of an int and gives it back with a release store, as CallTable's spare call; the pool and the
// in-flight table take _lock. ServerCall.InFlight says whether a call is in the table: it is written under
// _lock only, and read without it only by the thread that owns the call (the one returning it). _rented counts
// the pooled calls rented and not returned (one interlocked add each way); the spare counts through _spareTaken,
// so it costs no add. A drain publishes _idle, issues a process-wide barrier and then reads both; a return lowers
// its count first (a full fence for a pooled call; for the spare a plain store, which the drain's barrier or the
// fence the spare's return takes once it sees _idle orders) and then reads _idle; so the return that finds
// nothing rented after a drain began, or the drain itself, completes _idle.
internal sealed class ServerCallTable(XCallConnection connection)
{
    // Registered calls since one found another call in flight (under _lock), up to AloneStreak.
    private const int AloneStreak = 64;
    private const int MaxPooled = 64;

    private readonly object _lock = new();
    private readonly Stack<ServerCall> _pool = new();
    private readonly Dictionary<ulong, ServerCall> _inFlight = new();
    private readonly ServerCall _spare = new(connection);
    private int _spareTaken;
    private int _sharedCallsAgo;
    private int _rented;
    private TaskCompletionSource? _idle;

    /// <summary>Calls received and not answered yet (rented, not returned).</summary>
    public int Calls => Volatile.Read(ref _rented) + Volatile.Read(ref _spareTaken);

    /// <summary>A call for a frame that arrived on link <paramref name="link"/>.</summary>
    public ServerCall Rent(ulong callId, uint methodId, bool oneWay, int link)
    {
        ServerCall? call = Interlocked.Exchange(ref _spareTaken, 1) == 0 ? _spare : null;
        if (call is null)
        {
            Interlocked.Increment(ref _rented);
            lock (_lock)
            {
                _pool.TryPop(out call);
            }
            call ??= new ServerCall(connection);
        }
        call.Prepare(callId, methodId, oneWay);
        call.Link = link;
        return call;
    }

    /// <summary>Makes a call that outlives its dispatch reachable by cancel frames.</summary>
    /// <returns>True when this call is the only one in flight and the last <see cref="AloneStreak"/> calls were too.</returns>
    public bool Register(ServerCall call)
    {
        lock (_lock)
        {
            _inFlight[call.CallId] = call;
            call.InFlight = true;
            _sharedCallsAgo = _inFlight.Count > 1 ? 0 : Math.Min(_sharedCallsAgo + 1, AloneStreak);
            return _sharedCallsAgo == AloneStreak;
        }
    }

    /// <summary>The registered call with id <paramref name="callId"/>, if any.</summary>
    public ServerCall? Find(ulong callId)
    {
        lock (_lock)
        {
            return _inFlight.GetValueOrDefault(callId);
        }
    }

    /// <summary>Every registered call, to cancel them all.</summary>
    public ServerCall[] Snapshot()
    {
        lock (_lock)
        {
            return [.. _inFlight.Values];
        }
    }

    /// <summary>Gives a call back after its last use, out of the in-flight table if it was registered.</summary>
    public void Return(ServerCall call)
    {
        if (call.InFlight)
        {
            lock (_lock)
            {
                if (_inFlight.TryGetValue(call.CallId, out ServerCall? registered) && ReferenceEquals(registered, call))
                {
                    _inFlight.Remove(call.CallId);
                }
                call.InFlight = false;
            }
        }
        if (ReferenceEquals(call, _spare))
        {
            Volatile.Write(ref _spareTaken, 0);
            if (Volatile.Read(ref _idle) is { } drain)
            {
                Interlocked.MemoryBarrier(); // draining: order the store above before the count is read
                CompleteIfIdle(drain);
            }
            return;
        }
        lock (_lock)
        {
            if (_pool.Count < MaxPooled)
            {
                _pool.Push(call);
            }
        }
        if (Interlocked.Decrement(ref _rented) == 0 && Volatile.Read(ref _idle) is { } idle)
        {
            CompleteIfIdle(idle);
        }
    }

    private void CompleteIfIdle(TaskCompletionSource idle)
    {
        if (Volatile.Read(ref _rented) == 0 && Volatile.Read(ref _spareTaken) == 0)
        {
            idle.TrySetResult();
        }
    }

    /// <summary>Completes when no call is rented, from now on: the caller stops new calls from being rented first.</summary>
    public Task WhenIdle()
    {
        TaskCompletionSource idle = Volatile.Read(ref _idle) ?? Interlocked.CompareExchange(ref _idle, new(TaskCreationOptions.RunContinuationsAsynchronously), null) ?? _idle!;
        Interlocked.MemoryBarrierProcessWide(); // the spare's return stores with no fence (see Design)
        CompleteIfIdle(idle);
        return idle.Task;
    }
}
