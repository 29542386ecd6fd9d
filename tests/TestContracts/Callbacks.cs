namespace XCall.Tests.Contracts;

/// <summary>The server side of <see cref="ICallbacks"/>.</summary>
public sealed class Callbacks : ICallbacks
{
    private readonly Counter _shared = new(100);
    private ICallback? _held;

    /// <inheritdoc/>
    public int CallBack(ICallback callback, int n)
    {
        int sum = 0;
        for (int i = 1; i <= n; i++)
        {
            sum += callback.Report(i);
        }
        return sum;
    }

    /// <inheritdoc/>
    public async Task<int> CallBackAsync(ICallback callback, int n)
    {
        await Task.Yield();
        return CallBack(callback, n);
    }

    /// <inheritdoc/>
    public int AsyncPair(IAsyncCallback callback)
    {
        Task<int> a = callback.ReportAsync(1);
        Thread.Sleep(200); // the caller's thread has taken the first one by now
        Task<int> b = callback.ReportAsync(2);
        return a.GetAwaiter().GetResult() + b.GetAwaiter().GetResult();
    }

    /// <inheritdoc/>
    public int AsyncOnce(IAsyncCallback callback, int value) => callback.ReportAsync(value).GetAwaiter().GetResult();

    /// <inheritdoc/>
    public int Nest(ICallback callback, int depth) => callback.Nested(depth) + 1;

    /// <inheritdoc/>
    public ICallback? Echo(ICallback? callback) => callback;

    /// <inheritdoc/>
    public bool Same(ICallback a, ICallback b) => ReferenceEquals(a, b);

    /// <inheritdoc/>
    public int CallHolder(CallbackHolder holder, int value) => holder.Callback!.Report(value);

    /// <inheritdoc/>
    public ICounter CreateCounter(int start) => new Counter(start);

    /// <inheritdoc/>
    public Task<ICounter> CreateCounterAsync(int start) => Task.FromResult<ICounter>(new Counter(start));

    /// <inheritdoc/>
    public ICounter SharedCounter() => _shared;

    /// <inheritdoc/>
    public bool Hold(ICallback callback)
    {
        bool same = ReferenceEquals(_held, callback);
        _held = callback;
        return same;
    }

    /// <summary>The callback this service holds (tests look at what arrived).</summary>
    public ICallback? Held => _held;

    /// <inheritdoc/>
    public bool HoldFromHolder(CallbackHolder holder) => Hold(holder.Callback!);

    /// <inheritdoc/>
    public int HoldFirst(List<ICallback> callbacks)
    {
        Hold(callbacks[0]);
        return callbacks.Count;
    }

    /// <inheritdoc/>
    public bool HoldFromDictionary(Dictionary<string, ICallback> callbacks) => Hold(callbacks["a"]);

    /// <inheritdoc/>
    public bool HoldFromSlot(CallbackSlot slot) => Hold(slot.Callback!);

    /// <inheritdoc/>
    public async Task<CallbackHolder> HeldInHolderAsync()
    {
        await Task.Yield();
        return new CallbackHolder { Name = "held", Callback = _held };
    }

    /// <inheritdoc/>
    public void DropHeld(bool dispose)
    {
        if (dispose)
        {
            (_held as IDisposable)?.Dispose();
        }
        _held = null;
    }

    /// <inheritdoc/>
    public void CollectGarbage()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }

    /// <inheritdoc/>
    public void Throw(string kind)
    {
        switch (kind)
        {
            case "inner":
                var outer = new InvalidOperationException("outer", new ArgumentException("inner problem", "arg"));
                outer.Data["key"] = "value";
                outer.Data["number"] = 42; // not a string: not sent
                throw outer;
            case "aggregate":
                throw new AggregateException("many", new TimeoutException("first"), new NotSupportedException("second"));
            case "KeyNotFoundException":
                throw new KeyNotFoundException("missing key");
            case "ArgumentOutOfRangeException":
                throw new ArgumentOutOfRangeException("index", "too big");
            case "unreadable":
                throw new UnreadableException();
            default:
                throw new FormatException("not a known kind: " + kind);
        }
    }

    /// <inheritdoc/>
    public void ThrowReporting(ICallback callback) => throw new ReportingException(callback);

    public int Weigh(Weighed value) => value.Grams;

    /// <summary>An exception whose message asks the caller (a call on the connection the error goes back on).</summary>
    public sealed class ReportingException(ICallback callback) : Exception
    {
        public override string Message => $"reported {callback.Report(7)}";
    }

    /// <summary>An exception whose message cannot be read (its getter throws).</summary>
    public sealed class UnreadableException : Exception
    {
        public override string Message => throw new InvalidOperationException("no message today");
    }

    private static readonly System.Collections.Concurrent.ConcurrentDictionary<string, Gate> s_gates = new();

    /// <inheritdoc/>
    public string Trace(ITracer tracer, int depth) => depth <= 0 ? ThreadKind() : ThreadKind() + ">" + tracer.Trace(depth);

    /// <inheritdoc/>
    public bool WaitForGate(string name, int timeoutMs)
    {
        Gate gate = s_gates.GetOrAdd(name, _ => new Gate());
        Interlocked.Increment(ref gate.Waiters);
        try
        {
            return gate.Opened.Wait(timeoutMs);
        }
        finally
        {
            Interlocked.Decrement(ref gate.Waiters);
        }
    }

    /// <inheritdoc/>
    public void OpenGate(string name) => s_gates.GetOrAdd(name, _ => new Gate()).Opened.Set();

    /// <inheritdoc/>
    public int GateWaiters(string name) => Volatile.Read(ref s_gates.GetOrAdd(name, _ => new Gate()).Waiters);

    private sealed class Gate
    {
        public readonly ManualResetEventSlim Opened = new();
        public int Waiters;
    }

    /// <summary>"pool" on a thread-pool thread, "receive" on a transport's receive thread, else "thread".</summary>
    public static string ThreadKind() =>
        Thread.CurrentThread.IsThreadPoolThread ? "pool"
        : Thread.CurrentThread.Name?.EndsWith(" receive", StringComparison.Ordinal) == true ? "receive"
        : "thread";

    private sealed class Counter(int start) : ICounter
    {
        private int _value = start;

        public int Next() => Interlocked.Increment(ref _value);

        public Task<int> NextAsync() => Task.FromResult(Next());

        public void Advance(int by) => Interlocked.Add(ref _value, by);
    }
}

/// <summary>The server side of <see cref="IActivation"/>: counts its instances.</summary>
public sealed class Activation : IActivation
{
    private static int s_instances;
    private readonly int _id = Interlocked.Increment(ref s_instances);

    /// <inheritdoc/>
    public int InstanceId() => _id;
}
