using System.Runtime.CompilerServices;
using System.Threading.Tasks.Sources;

namespace XCall.Channels;

// Design:
// - _state is the claim word of the select in progress: Idle -> Enabling (the selecting process
//   registers with its guards) -> Waiting (it sleeps on _signal) -> Fired -> Idle. Guards,
//   channels and timers only ever move it to Fired, with CompareExchange: from Enabling (the
//   selector sees Fired when it tries to sleep and does not sleep) or from Waiting (the one winner
//   completes _signal). So _signal is completed at most once per select, by exactly one party,
//   and only after the selector armed it (Reset happens before Waiting is published). The
//   selector itself moves Idle -> Enabling with CompareExchange, which catches a second process
//   selecting on the same Alternative at once, and holds the word away from Idle until it returns.
// - A notification never communicates: it says "look again". After waking, the selector disables
//   every guard it enabled, in select order, and each Disable re-checks readiness under that
//   channel's lock; the first ready guard in that order is chosen. Guards that only have one
//   process on the selecting side (One2One / Any2One inputs, One2One / One2Any outputs) stay
//   ready until that process acts, so the read or write after the select is the one
//   communication, and the other guards are left as they were.
// - A select first looks at its guards in select order without registering anywhere (Guard.Poll;
//   an unbuffered channel is read without its lock). The same argument makes a guard seen ready
//   there stay ready until the selecting process acts, so the first one seen ready is the choice,
//   the one Enable / Disable would have made, and the select costs no listener and no lock on an
//   unbuffered channel. Only when none is ready does the select enable, wait and disable.
// - A stale notification (from a channel that saw this Alternative registered for an earlier
//   select) can only cause a spurious wake; finding no ready guard, the selector enables again.
// - One process selects on an Alternative at a time; the selecting process owns _favourite.

/// <summary>
/// Waits until one of several guards is ready and says which: channel inputs and outputs,
/// <see cref="CSTimer"/>s and <see cref="Skip"/>. Each guard can have a pre-condition that
/// removes it from one select.
/// </summary>
public sealed class Alternative : IReadinessListener
{
    private const int Idle = 0;
    private const int Enabling = 1;
    private const int Waiting = 2;
    private const int Fired = 3;

    private readonly Guard[] _guards;
    private readonly Signal _signal = new();
    private int _state;
    private int _favourite;

    /// <summary>Creates an Alternative over <paramref name="guards"/>; a select returns an index into this array.</summary>
    /// <exception cref="InvalidOperationException">A guard is a shared channel end (One2Any / Any2Any input, Any2One / Any2Any output).</exception>
    public Alternative(params Guard[] guards)
    {
        ArgumentNullException.ThrowIfNull(guards);
        if (guards.Length == 0)
        {
            throw new ArgumentException("An Alternative needs at least one guard.", nameof(guards));
        }
        foreach (Guard guard in guards)
        {
            ArgumentNullException.ThrowIfNull(guard, nameof(guards));
            guard.CheckCanGuard();
        }
        _guards = (Guard[])guards.Clone();
    }

    /// <summary>Waits for a ready guard and returns the index of one of them, chosen arbitrarily.</summary>
    public ValueTask<int> SelectAsync() => SelectAsync(null, default);

    /// <inheritdoc cref="SelectAsync()"/>
    public ValueTask<int> SelectAsync(CancellationToken cancellationToken) => SelectAsync(null, cancellationToken);

    /// <summary>As <see cref="SelectAsync()"/>, over the guards whose pre-condition is true.</summary>
    public ValueTask<int> SelectAsync(bool[]? preconditions, CancellationToken cancellationToken = default) =>
        SelectCoreAsync(Random.Shared.Next(_guards.Length), fair: false, preconditions, cancellationToken);

    /// <summary>Waits for a ready guard and returns the first ready one in array order (the earliest has priority).</summary>
    public ValueTask<int> PriSelectAsync() => PriSelectAsync(null, default);

    /// <inheritdoc cref="PriSelectAsync()"/>
    public ValueTask<int> PriSelectAsync(CancellationToken cancellationToken) => PriSelectAsync(null, cancellationToken);

    /// <summary>As <see cref="PriSelectAsync()"/>, over the guards whose pre-condition is true.</summary>
    public ValueTask<int> PriSelectAsync(bool[]? preconditions, CancellationToken cancellationToken = default) =>
        SelectCoreAsync(0, fair: false, preconditions, cancellationToken);

    /// <summary>
    /// Waits for a ready guard, favouring the one after the guard chosen last: a guard that stays
    /// ready is chosen within n fair selects over n guards.
    /// </summary>
    public ValueTask<int> FairSelectAsync() => FairSelectAsync(null, default);

    /// <inheritdoc cref="FairSelectAsync()"/>
    public ValueTask<int> FairSelectAsync(CancellationToken cancellationToken) => FairSelectAsync(null, cancellationToken);

    /// <summary>As <see cref="FairSelectAsync()"/>, over the guards whose pre-condition is true.</summary>
    public ValueTask<int> FairSelectAsync(bool[]? preconditions, CancellationToken cancellationToken = default) =>
        SelectCoreAsync(_favourite, fair: true, preconditions, cancellationToken);

    /// <summary>Blocking form of <see cref="SelectAsync()"/>.</summary>
    public int Select(bool[]? preconditions = null) => Blocking.Wait(SelectAsync(preconditions, default));

    /// <summary>Blocking form of <see cref="PriSelectAsync()"/>.</summary>
    public int PriSelect(bool[]? preconditions = null) => Blocking.Wait(PriSelectAsync(preconditions, default));

    /// <summary>Blocking form of <see cref="FairSelectAsync()"/>.</summary>
    public int FairSelect(bool[]? preconditions = null) => Blocking.Wait(FairSelectAsync(preconditions, default));

    /// <summary>A guard may be ready: wake the selector if it sleeps, or tell it not to.</summary>
    void IReadinessListener.Notify() => Notify();

    internal void Notify()
    {
        while (true)
        {
            int state = Volatile.Read(ref _state);
            if (state is not (Enabling or Waiting))
            {
                return;
            }
            if (Interlocked.CompareExchange(ref _state, Fired, state) == state)
            {
                if (state == Waiting)
                {
                    _signal.Wake();
                }
                return;
            }
        }
    }

    private ValueTask<int> SelectCoreAsync(int start, bool fair, bool[]? preconditions, CancellationToken cancellationToken)
    {
        // Anything unusual (cancelled, pre-conditions of the wrong length, a second selector) is
        // left to the full select, which reports it.
        if (!cancellationToken.IsCancellationRequested
            && (preconditions is null || preconditions.Length == _guards.Length)
            && Interlocked.CompareExchange(ref _state, Enabling, Idle) == Idle)
        {
            int chosen = Poll(start, preconditions);
            if (chosen >= 0 && fair)
            {
                _favourite = (chosen + 1) % _guards.Length;
            }
            Volatile.Write(ref _state, Idle);
            if (chosen >= 0)
            {
                return new ValueTask<int>(chosen);
            }
        }
        return SelectAndWaitAsync(start, fair, preconditions, cancellationToken);
    }

    /// <summary>The first ready guard in select order, looked at without registering; -1 when none is.</summary>
    private int Poll(int start, bool[]? preconditions)
    {
        int n = _guards.Length;
        for (int k = 0; k < n; k++)
        {
            int i = (start + k) % n;
            if ((preconditions is null || preconditions[i]) && _guards[i].Poll())
            {
                return i;
            }
        }
        return -1;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> SelectAndWaitAsync(int start, bool fair, bool[]? preconditions, CancellationToken cancellationToken)
    {
        int n = _guards.Length;
        if (preconditions is not null && preconditions.Length != n)
        {
            throw new ArgumentException($"Expected {n} pre-conditions, one per guard.", nameof(preconditions));
        }
        if (Interlocked.CompareExchange(ref _state, Enabling, Idle) != Idle)
        {
            throw new InvalidOperationException("Another process is selecting on this Alternative.");
        }
        try
        {
            while (true)
            {
                cancellationToken.ThrowIfCancellationRequested();
                _signal.Arm();
                int visited = Enable(start, preconditions, out bool ready);
                if (!ready && Interlocked.CompareExchange(ref _state, Waiting, Enabling) == Enabling)
                {
                    using (cancellationToken.UnsafeRegister(static s => ((Alternative)s!).Notify(), this))
                    {
                        await _signal.WaitAsync();
                    }
                }
                int chosen = Disable(start, visited, preconditions);
                if (chosen >= 0)
                {
                    Volatile.Write(ref _state, Idle);
                    if (fair)
                    {
                        _favourite = (chosen + 1) % n;
                    }
                    return chosen;
                }
                // A spurious wake: nothing is ready after all, so enable again.
                Volatile.Write(ref _state, Enabling);
            }
        }
        catch
        {
            // A failed select (cancelled, no guard enabled) leaves the Alternative usable.
            Volatile.Write(ref _state, Idle);
            throw;
        }
    }

    /// <summary>Enables guards in select order until one is ready; returns how many (in order) were visited.</summary>
    private int Enable(int start, bool[]? preconditions, out bool ready)
    {
        ready = false;
        int n = _guards.Length;
        bool any = false;
        for (int k = 0; k < n; k++)
        {
            int i = (start + k) % n;
            if (preconditions is not null && !preconditions[i])
            {
                continue;
            }
            any = true;
            if (_guards[i].Enable(this))
            {
                ready = true;
                return k + 1;
            }
        }
        if (!any)
        {
            throw new InvalidOperationException("Every guard's pre-condition is false: the select could never end.");
        }
        return n;
    }

    /// <summary>Disables the visited guards in select order; returns the first ready one, or -1.</summary>
    private int Disable(int start, int visited, bool[]? preconditions)
    {
        int n = _guards.Length;
        int chosen = -1;
        for (int k = 0; k < visited; k++)
        {
            int i = (start + k) % n;
            if (preconditions is not null && !preconditions[i])
            {
                continue;
            }
            if (_guards[i].Disable(this) && chosen < 0)
            {
                chosen = i;
            }
        }
        return chosen;
    }

    /// <summary>The selector's sleep: one pooled completion, re-armed for every select.</summary>
    private sealed class Signal : IValueTaskSource, IHandOffTarget
    {
        private ManualResetValueTaskSourceCore<bool> _core;

        internal void Arm() => _core.Reset();

        internal void Wake() => HandOff.Complete(this);

        void IHandOffTarget.Complete(bool runContinuationAsynchronously)
        {
            _core.RunContinuationsAsynchronously = runContinuationAsynchronously;
            _core.SetResult(true);
        }

        internal ValueTask WaitAsync() => new(this, _core.Version);

        public void GetResult(short token) => _core.GetResult(token);

        public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
            _core.OnCompleted(continuation, state, token, flags);
    }
}
