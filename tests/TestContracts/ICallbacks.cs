namespace XCall.Tests.Contracts;

/// <summary>An object the client passes to the server by reference; the server calls back through it.</summary>
[Remotable]
public interface ICallback
{
    /// <summary>Reports one value; returns what the callee makes of it.</summary>
    int Report(int value);

    /// <summary>A callback that may call the server again (nested calls), <paramref name="depth"/> levels.</summary>
    int Nested(int depth);
}

/// <summary>An object created by the server for one client (client-activated).</summary>
[Remotable]
public interface ICounter
{
    /// <summary>The next value.</summary>
    int Next();

    /// <summary>Async <see cref="Next"/>.</summary>
    Task<int> NextAsync();

    /// <summary>Moves the counter on by <paramref name="by"/> without waiting.</summary>
    [OneWay]
    void Advance(int by);
}

/// <summary>A data type with an object reference among its members.</summary>
public sealed class CallbackHolder
{
    /// <summary>A label.</summary>
    public string? Name { get; set; }

    /// <summary>Travels by reference inside the data object.</summary>
    public ICallback? Callback { get; set; }
}

/// <summary>A data type whose getter can be made to run code while the argument is being written.</summary>
public sealed class Weighed
{
    private int _grams;

    /// <summary>When set, the getter of <see cref="Grams"/> returns what this returns (per thread: the writing thread's).</summary>
    [ThreadStatic]
    public static Func<int>? Ask;

    /// <summary>The weight.</summary>
    public int Grams
    {
        get => Ask is { } ask ? ask() : _grams;
        set => _grams = value;
    }
}

/// <summary>A struct with an object reference among its fields.</summary>
public struct CallbackSlot
{
    /// <summary>A number.</summary>
    public int Id;

    /// <summary>Travels by reference inside the struct.</summary>
    public ICallback? Callback;
}

/// <summary>Object references, callbacks, factories and exceptions.</summary>
[Remotable]
public interface ICallbacks
{
    /// <summary>Calls <c>callback.Report(i)</c> for i = 1..n and returns the sum of the results.</summary>
    int CallBack(ICallback callback, int n);

    /// <summary>Async <see cref="CallBack"/>.</summary>
    Task<int> CallBackAsync(ICallback callback, int n);

    /// <summary>Returns <c>callback.Nested(depth) + 1</c>; the client's callback calls this again with depth - 1.</summary>
    int Nest(ICallback callback, int depth);

    /// <summary>Returns the reference it got.</summary>
    ICallback? Echo(ICallback? callback);

    /// <summary>Whether the two references arrived as one proxy.</summary>
    bool Same(ICallback a, ICallback b);

    /// <summary>Calls the callback inside a data object.</summary>
    int CallHolder(CallbackHolder holder, int value);

    /// <summary>A new counter starting at <paramref name="start"/> (a factory: each call a distinct remote object).</summary>
    ICounter CreateCounter(int start);

    /// <summary>Async <see cref="CreateCounter"/>.</summary>
    Task<ICounter> CreateCounterAsync(int start);

    /// <summary>The same counter every time.</summary>
    ICounter SharedCounter();

    /// <summary>Keeps <paramref name="callback"/>; returns whether it is the proxy already held.</summary>
    bool Hold(ICallback callback);

    /// <summary>Throws an exception whose message is read from <c>callback.Report(7)</c>: a call back to the caller while the error is being sent.</summary>
    void ThrowReporting(ICallback callback);

    /// <summary>Keeps the callback inside <paramref name="holder"/>, as <see cref="Hold"/> does.</summary>
    bool HoldFromHolder(CallbackHolder holder);

    /// <summary>Returns <c>value.Grams</c>.</summary>
    int Weigh(Weighed value);

    /// <summary>Keeps the first callback of <paramref name="callbacks"/>, as <see cref="Hold"/> does; returns how many arrived.</summary>
    int HoldFirst(List<ICallback> callbacks);

    /// <summary>Keeps <c>callbacks["a"]</c>, as <see cref="Hold"/> does.</summary>
    bool HoldFromDictionary(Dictionary<string, ICallback> callbacks);

    /// <summary>Keeps the callback inside <paramref name="slot"/>, as <see cref="Hold"/> does.</summary>
    bool HoldFromSlot(CallbackSlot slot);

    /// <summary>The held callback inside a new holder, asynchronously.</summary>
    Task<CallbackHolder> HeldInHolderAsync();

    /// <summary>Drops the held callback: disposes its proxy, or just forgets it so the GC collects it.</summary>
    void DropHeld(bool dispose);

    /// <summary>Runs the garbage collector and finalizers (to observe releases of collected proxies).</summary>
    void CollectGarbage();

    /// <summary>Throws: "inner" (InvalidOperationException with an inner ArgumentException and Data), "aggregate", or a BCL type name.</summary>
    void Throw(string kind);

    /// <summary>Starts two async callbacks in the synchronous part, then waits for both synchronously.</summary>
    int AsyncPair(IAsyncCallback callback);

    /// <summary>One async callback waited for synchronously.</summary>
    int AsyncOnce(IAsyncCallback callback, int value);

    /// <summary>
    /// A chain of calls: returns where this call runs (<see cref="ThreadKind"/>), then, while <paramref name="depth"/> is
    /// above 0, <c>"&gt;" + tracer.Trace(depth)</c> (the client's tracer calls this again with depth - 1).
    /// </summary>
    string Trace(ITracer tracer, int depth);

    /// <summary>Blocks until <see cref="OpenGate"/> opens the gate named <paramref name="name"/> or <paramref name="timeoutMs"/> passes; whether it opened.</summary>
    bool WaitForGate(string name, int timeoutMs);

    /// <summary>Opens the gate named <paramref name="name"/>.</summary>
    void OpenGate(string name);

    /// <summary>How many calls of <see cref="WaitForGate"/> wait at the gate named <paramref name="name"/> now.</summary>
    int GateWaiters(string name);
}

/// <summary>The client's end of <see cref="ICallbacks.Trace"/>.</summary>
[Remotable]
public interface ITracer
{
    /// <summary>Where the callback runs, then <c>"&gt;" + service.Trace(this, depth - 1)</c>.</summary>
    string Trace(int depth);
}

/// <summary>A client object with an async method.</summary>
[Remotable]
public interface IAsyncCallback
{
    /// <summary>Reports one value.</summary>
    Task<int> ReportAsync(int value);
}

/// <summary>Served per call: each call meets a new instance.</summary>
[Remotable]
public interface IActivation
{
    /// <summary>The serial number of the instance serving this call.</summary>
    int InstanceId();
}
