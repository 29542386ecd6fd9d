using System.Collections.Concurrent;
using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>Calls a test holds at a gate, to fill a connection's bound on concurrent calls, and calls that observe it.</summary>
[Remotable]
public interface IBoundedService
{
    /// <summary>Waits on its thread until the gate opens; returns <paramref name="value"/>.</summary>
    int Hold(int value);

    /// <summary>Waits without a thread until the gate opens; returns <paramref name="value"/>.</summary>
    Task<int> HoldAsync(int value);

    /// <summary>Waits on its thread until the gate opens; returns the length of <paramref name="data"/>.</summary>
    int HoldBytes(byte[] data);

    /// <summary>Counts its runs.</summary>
    int Add(int a, int b);

    /// <summary>Returns <c>a + b</c> after yielding its thread (its reply is written by a continuation).</summary>
    Task<int> AddAsync(int a, int b);

    /// <summary>Throws <see cref="InvalidOperationException"/>.</summary>
    int Fail(int value);

    /// <summary>Waits until its caller cancels it.</summary>
    int WaitForCancel(CancellationToken cancellationToken);

    /// <summary>Records <paramref name="sequence"/> and the thread it ran on.</summary>
    [OneWay]
    void Record(int sequence);

    /// <summary>Calls <c>callback.Report(value)</c> synchronously; records the result or the exception.</summary>
    [OneWay]
    void CallBack(ICallback callback, int value);

    /// <summary>Calls <c>callback.ReportAsync(value)</c>; records the result or the exception when it ends.</summary>
    [OneWay]
    void CallBackAsync(IAsyncCallback callback, int value);

    /// <summary>Returns <c>callback.Nested(depth) + 1</c>; the caller's callback calls this again with depth - 1.</summary>
    int Nest(ICallback callback, int depth);

    /// <summary>Calls <c>callback.Report(value)</c> in its synchronous part: a callback nested in the caller's async call.</summary>
    Task<int> ReportFirstAsync(ICallback callback, int value);
}

/// <summary>
/// <see cref="ConnectionOptions.MaxConcurrentCalls"/> and <see cref="ConnectionOptions.MaxConcurrentArgumentBytes"/>
/// under Concurrent dispatch: past them a call is refused without running (<see cref="XCallServerBusyException"/>),
/// a one-way call runs on the receiving thread (never lost), and calls nested in a waiting caller's call are not
/// counted. Each call gives its room back exactly once, whatever its end. Without the bound, every received call
/// would be queued to the thread pool, however many were already waiting there.
/// </summary>
public sealed class ConcurrentCallBoundTests
{
    // Failure bounds only: every wait below ends as soon as what it waits for happens.
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task A_call_past_the_bound_is_refused_at_once_without_running_and_the_connection_goes_on()
    {
        using var pair = new Pair("refused", new ConnectionOptions { MaxConcurrentCalls = 4 });
        IBoundedService proxy = pair.Proxy;
        Task<int>[] held = await pair.FillAsync(4);

        var refused = Assert.Throws<XCallServerBusyException>(() => proxy.Add(1, 2));
        Assert.Equal("mem://refused/server", refused.Endpoint);
        Assert.Contains("IBoundedService.Add", refused.Message);
        Assert.Contains("not run", refused.Message);
        Assert.Contains("safe to retry", refused.Message);
        Assert.Contains("MaxConcurrentCalls = 4", refused.Reason);
        await Assert.ThrowsAsync<XCallServerBusyException>(() => proxy.HoldAsync(9)); // async calls alike
        Assert.Equal(0, pair.Service.Adds);
        Assert.Equal(4, pair.Server.AdmittedCalls);

        await pair.OpenAsync(held);
        Assert.Equal(3, proxy.Add(1, 2));
        Assert.Equal(9, await proxy.HoldAsync(9));
        // Each call gave its room back before its reply left, so none is counted once its caller has the reply.
        Assert.Equal(0, pair.Server.AdmittedCalls);
        Assert.Equal(0, pair.Server.AdmittedArgumentBytes);
    }

    [Fact]
    public async Task A_caller_that_keeps_at_most_the_bound_in_flight_is_never_refused()
    {
        using var pair = new Pair("in-flight", new ConnectionOptions { MaxConcurrentCalls = 4 });
        IBoundedService proxy = pair.Proxy;
        pair.Service.Open();
        Task[] threads = [.. Enumerable.Range(0, 4).Select(t => Task.Factory.StartNew(() =>
        {
            for (int i = 0; i < 2_000; i++)
            {
                Assert.Equal(t + i, proxy.Add(t, i));
            }
        }, TaskCreationOptions.LongRunning))];
        await Task.WhenAll(threads).WaitAsync(Bound);

        using var inFlight = new SemaphoreSlim(4);
        Task<int>[] calls = [.. Enumerable.Range(0, 2_000).Select(async i =>
        {
            await inFlight.WaitAsync();
            try
            {
                return await proxy.AddAsync(i, 0);
            }
            finally
            {
                inFlight.Release();
            }
        })];
        Assert.Equal(Enumerable.Range(0, 2_000), await Task.WhenAll(calls).WaitAsync(Bound));
    }

    [Fact]
    public async Task A_burst_of_pipelined_async_calls_within_the_default_bound_is_never_refused()
    {
        // The receiving thread outruns the pool: nearly a whole burst is queued at once, so the default must take
        // bursts of the size callers make (RemoteShapesTests pipelines 1,500; 1,024 refused some of them).
        using var pair = new Pair("burst", new ConnectionOptions());
        IBoundedService proxy = pair.Proxy;
        for (int round = 0; round < 3; round++)
        {
            Task<int>[] burst = [.. Enumerable.Range(0, 10_000).Select(i => proxy.AddAsync(round, i))];
            Assert.Equal(Enumerable.Range(round, 10_000), await Task.WhenAll(burst).WaitAsync(Bound));
        }
    }

    [Fact]
    public async Task One_way_calls_past_the_bound_all_run_in_order_on_the_receiving_thread()
    {
        using var pair = new Pair("one-way", new ConnectionOptions { MaxConcurrentCalls = 4 });
        IBoundedService proxy = pair.Proxy;
        Task<int>[] held = await pair.FillAsync(4);

        const int Count = 2_000;
        for (int i = 0; i < Count; i++)
        {
            proxy.Record(i);
        }
        for (int i = 0; i < Count; i++)
        {
            Assert.True(await pair.Service.Recorded.WaitAsync(Bound), $"{i} of {Count} one-way calls ran");
        }
        (int Sequence, int Thread, bool Pool)[] records = [.. pair.Service.Records];
        Assert.Equal(Enumerable.Range(0, Count), records.Select(r => r.Sequence));
        Assert.DoesNotContain(records, r => r.Pool);
        Assert.Single(records.Select(r => r.Thread).Distinct());
        Assert.Equal(4, pair.Server.AdmittedCalls); // they took no room: they ran where they were received

        await pair.OpenAsync(held);
    }

    [Fact]
    public async Task A_one_way_call_past_the_bound_calls_back_asynchronously_and_fails_at_once_when_it_would_wait_on_its_own_receiving_thread()
    {
        using var pair = new Pair("one-way-callback", new ConnectionOptions { MaxConcurrentCalls = 4 });
        IBoundedService proxy = pair.Proxy;
        Task<int>[] held = await pair.FillAsync(4);

        // Run on the receiving thread: an asynchronous callback leaves that thread free to read its reply.
        var asyncCallback = new Callback();
        proxy.CallBackAsync(asyncCallback, 5);
        Assert.Equal(50, Assert.IsType<int>(await pair.Service.NextOutcomeAsync()));

        // A synchronous one would wait for a reply that only this thread could read: it fails at once, and the
        // callback is not sent. (DispatchMode.Inline has the same limit: see the next test.)
        var callback = new Callback(); // another object: an object keeps the contract it was first sent as
        proxy.CallBack(callback, 6);
        var failure = Assert.IsType<XCallException>(await pair.Service.NextOutcomeAsync());
        Assert.Contains("cannot make a synchronous call", failure.Message);
        Assert.Contains("MaxConcurrentCalls = 4", failure.Message);
        Assert.Empty(callback.Reports);

        await pair.OpenAsync(held);
        proxy.CallBack(callback, 7); // within the bound again: on the pool, where it may wait
        Assert.Equal(70, Assert.IsType<int>(await pair.Service.NextOutcomeAsync()));
        Assert.Equal(3, proxy.Add(1, 2));
    }

    [Fact]
    public async Task A_call_dispatched_inline_calls_back_asynchronously_and_fails_at_once_when_it_would_wait_on_its_own_receiving_thread()
    {
        // A synchronous callback here would wait for a reply that only its own thread can read: the whole
        // connection would hang until the callback's timeout (none by default).
        using var pair = new Pair("inline-callback", new ConnectionOptions { DispatchMode = DispatchMode.Inline, CallTimeout = TimeSpan.FromSeconds(30) });
        IBoundedService proxy = pair.Proxy;

        var asyncCallback = new Callback();
        proxy.CallBackAsync(asyncCallback, 5);
        Assert.Equal(50, Assert.IsType<int>(await pair.Service.NextOutcomeAsync()));

        var callback = new Callback();
        proxy.CallBack(callback, 6);
        var failure = Assert.IsType<XCallException>(await pair.Service.NextOutcomeAsync());
        Assert.Contains("dispatched inline", failure.Message);
        Assert.Contains("DispatchMode.Concurrent", failure.Message);
        Assert.Empty(callback.Reports);
        Assert.Equal(3, proxy.Add(1, 2)); // the connection goes on
    }

    [Fact]
    public void Callbacks_nested_in_a_waiting_call_are_never_refused_at_the_bound()
    {
        // Both sides admit one call; each level of the chain below is a call nested in a call that the other
        // side's thread waits for, and runs on that thread, so the chain needs no room beyond the first call.
        var tight = new ConnectionOptions { MaxConcurrentCalls = 1 };
        using var pair = new Pair("nested", tight, tight);
        var callback = new Callback { Server = pair.Proxy };
        Assert.Equal(6, pair.Proxy.Nest(callback, 5));
        Assert.Equal(0, pair.Server.AdmittedCalls);
        Assert.Equal(0, pair.Client.AdmittedCalls);
    }

    [Fact]
    public async Task A_callback_nested_in_an_async_call_needs_room_and_a_refusal_that_escapes_a_method_is_not_taken_for_one()
    {
        // The client's side admits one call from the server, and a blocked callback takes it.
        using var pair = new Pair("nested-async", new ConnectionOptions(), new ConnectionOptions { MaxConcurrentCalls = 1 });
        IBoundedService proxy = pair.Proxy;
        pair.Service.Open();
        var blocking = new Callback();
        proxy.CallBack(blocking, -1); // the server's one-way call calls back, not nested (a one-way call has no caller waiting)
        Assert.True(await blocking.Entered.WaitAsync(Bound), "the blocking callback did not start");
        Assert.Equal(1, pair.Client.AdmittedCalls);

        // Nobody waits for an async call on a thread, so its callback goes to the pool, and is refused here. The
        // server's method lets that refusal escape: it ran, so its caller gets the remote exception, not a refusal.
        var callback = new Callback();
        var escaped = await Assert.ThrowsAsync<RemoteInvocationException>(() => proxy.ReportFirstAsync(callback, 3));
        Assert.Equal(typeof(XCallServerBusyException).FullName, escaped.RemoteTypeName);
        Assert.Contains("MaxConcurrentCalls = 1", escaped.RemoteMessage);
        Assert.Empty(callback.Reports);

        blocking.Release.Set();
        Assert.Equal(-10, Assert.IsType<int>(await pair.Service.NextOutcomeAsync()));
        Assert.Equal(0, pair.Client.AdmittedCalls);
        Assert.Equal(30, await proxy.ReportFirstAsync(callback, 3));
    }

    [Fact]
    public async Task Arguments_past_the_byte_bound_are_refused_like_calls_past_the_count()
    {
        using var pair = new Pair("bytes", new ConnectionOptions { MaxConcurrentCalls = 100, MaxConcurrentArgumentBytes = 1000 });
        IBoundedService proxy = pair.Proxy;
        // The second is admitted with 600 bytes held (under 1000), and takes the total past the bound.
        Task<int>[] held = [.. Enumerable.Range(0, 2).Select(_ => Task.Factory.StartNew(() => proxy.HoldBytes(new byte[600]), TaskCreationOptions.LongRunning))];
        await pair.Service.WaitEnteredAsync(2);
        Assert.True(pair.Server.AdmittedArgumentBytes >= 1200, $"{pair.Server.AdmittedArgumentBytes} bytes held");

        var refused = Assert.Throws<XCallServerBusyException>(() => proxy.HoldBytes(new byte[10]));
        Assert.Contains("MaxConcurrentArgumentBytes = 1000", refused.Reason);
        Assert.Throws<XCallServerBusyException>(() => proxy.Add(1, 2));

        pair.Service.Open();
        Assert.Equal(new[] { 600, 600 }, await Task.WhenAll(held).WaitAsync(Bound));
        Assert.Equal(10, proxy.HoldBytes(new byte[10]));
        Assert.Equal(0, pair.Server.AdmittedArgumentBytes);
    }

    [Fact]
    public async Task A_flood_of_calls_to_a_blocked_server_is_refused_and_nothing_queues_past_the_bound()
    {
        using var pair = new Pair("flood", new ConnectionOptions { MaxConcurrentCalls = 4 });
        IBoundedService proxy = pair.Proxy;
        Task<int>[] held = await pair.FillAsync(4, onThreads: false);
        long bytesHeld = pair.Server.AdmittedArgumentBytes;

        // Before the bound, each of these waited at the gate too, queued behind the others without limit.
        Task<int>[] flood = [.. Enumerable.Range(0, 10_000).Select(proxy.HoldAsync)];
        foreach (Task<int> call in flood)
        {
            await Assert.ThrowsAsync<XCallServerBusyException>(() => call.WaitAsync(Bound));
        }
        Assert.Equal(4, pair.Server.AdmittedCalls);
        Assert.Equal(bytesHeld, pair.Server.AdmittedArgumentBytes);
        Assert.Equal(4, pair.Service.EnteredCount);

        await pair.OpenAsync(held);
    }

    [Fact]
    public async Task Every_call_gives_its_room_back_exactly_once_however_it_ends()
    {
        using var pair = new Pair("release", new ConnectionOptions { MaxConcurrentCalls = 4 });
        IBoundedService proxy = pair.Proxy;
        pair.Service.Open();
        for (int i = 0; i < 50; i++)
        {
            Assert.Equal(i, proxy.Add(i, 0)); // a reply
            Assert.Equal($"failed {i}", Assert.Throws<RemoteInvocationException>(() => proxy.Fail(i)).RemoteMessage); // an error
            Assert.Equal(i, await proxy.AddAsync(i, 0)); // an async method
            proxy.Record(i); // a one-way call
            Assert.True(await pair.Service.Recorded.WaitAsync(Bound));
        }
        for (int i = 0; i < 10; i++)
        {
            // A cancelled call: the server's method ends after its caller stopped waiting.
            using var cts = new CancellationTokenSource();
            Task<int> waiting = Task.Factory.StartNew(() => proxy.WaitForCancel(cts.Token), TaskCreationOptions.LongRunning);
            await pair.Service.WaitEnteredAsync(1);
            cts.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiting.WaitAsync(Bound));
        }
        // The cancelled methods end on their own time, after their callers stopped waiting: nothing to await.
        Assert.True(SpinWait.SpinUntil(() => pair.Server.AdmittedCalls == 0, Bound), $"{pair.Server.AdmittedCalls} calls still counted");
        Assert.Equal(0, pair.Server.AdmittedArgumentBytes);

        // Given back once each, not more: the bound is exact again.
        pair.Service.Close();
        Task<int>[] held = await pair.FillAsync(4, onThreads: false);
        await Assert.ThrowsAsync<XCallServerBusyException>(() => proxy.HoldAsync(4));
        await pair.OpenAsync(held);
    }

    [Fact]
    public async Task Calls_running_when_the_connection_closes_give_their_room_back_when_they_end()
    {
        using var pair = new Pair("closed", new ConnectionOptions { MaxConcurrentCalls = 4 });
        IBoundedService proxy = pair.Proxy;
        Task<int>[] held = await pair.FillAsync(4);
        pair.Client.Dispose(); // the in-memory pair closes both ends
        foreach (Task<int> call in held)
        {
            await Assert.ThrowsAsync<XCallDisconnectedException>(() => call.WaitAsync(Bound));
        }
        Assert.Equal(4, pair.Server.AdmittedCalls);
        pair.Service.Open(); // the methods return; their replies have nowhere to go
        Assert.True(SpinWait.SpinUntil(() => pair.Server.AdmittedCalls == 0, Bound), $"{pair.Server.AdmittedCalls} calls still counted");
    }

    [Fact]
    public void Bounds_out_of_range_are_refused_before_any_connection_uses_them()
    {
        (InMemoryChannel client, InMemoryChannel server) = InMemoryChannel.CreatePair("ranges");
        using var _ = client;
        foreach (int calls in new[] { 0, -1, ConnectionOptions.MaxConcurrentCallsLimit + 1 })
        {
            var options = new ConnectionOptions { MaxConcurrentCalls = calls };
            Assert.Equal("MaxConcurrentCalls", Assert.Throws<ArgumentOutOfRangeException>(() => new XCallServer(options)).ParamName);
            Assert.Throws<ArgumentOutOfRangeException>(() => new XCallConnection(server, options));
        }
        foreach (long bytes in new[] { 0, -1, ConnectionOptions.MaxConcurrentArgumentBytesLimit + 1 })
        {
            var options = new ConnectionOptions { MaxConcurrentArgumentBytes = bytes };
            Assert.Equal("MaxConcurrentArgumentBytes", Assert.Throws<ArgumentOutOfRangeException>(() => new XCallServer(options)).ParamName);
            Assert.Throws<ArgumentOutOfRangeException>(() => new XCallConnection(client, options));
        }
        using var widest = new XCallServer(new ConnectionOptions
        {
            MaxConcurrentCalls = ConnectionOptions.MaxConcurrentCallsLimit,
            MaxConcurrentArgumentBytes = ConnectionOptions.MaxConcurrentArgumentBytesLimit,
        });
        using var narrowest = new XCallServer(new ConnectionOptions { MaxConcurrentCalls = 1, MaxConcurrentArgumentBytes = 1 });
    }

    /// <summary>A client connection and a server connection serving a <see cref="BoundedService"/>, over in-memory channels.</summary>
    private sealed class Pair : IDisposable
    {
        public Pair(string name, ConnectionOptions server, ConnectionOptions? client = null)
        {
            (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair(name);
            Server = new XCallConnection(serverChannel, server);
            Server.ExposeRoot(Service, ContractRegistry.Get<IBoundedService>().Dispatcher);
            Server.Start();
            Client = new XCallConnection(clientChannel, client);
            Client.Start();
            Proxy = Client.GetProxy<IBoundedService>();
        }

        public BoundedService Service { get; } = new();

        public XCallConnection Server { get; }

        public XCallConnection Client { get; }

        public IBoundedService Proxy { get; }

        /// <summary>Fills the server's room with <paramref name="count"/> calls waiting at the gate, each on a thread of its own or none.</summary>
        public async Task<Task<int>[]> FillAsync(int count, bool onThreads = true)
        {
            Task<int>[] held = onThreads
                ? [.. Enumerable.Range(0, count).Select(i => Task.Factory.StartNew(() => Proxy.Hold(i), TaskCreationOptions.LongRunning))]
                : [.. Enumerable.Range(0, count).Select(Proxy.HoldAsync)];
            await Service.WaitEnteredAsync(count);
            return held;
        }

        /// <summary>Opens the gate: the calls <see cref="FillAsync"/> made return, and none stays counted once its caller has the reply.</summary>
        public async Task OpenAsync(Task<int>[] held)
        {
            Service.Open();
            Assert.Equal(Enumerable.Range(0, held.Length), await Task.WhenAll(held).WaitAsync(Bound));
            Assert.Equal(0, Server.AdmittedCalls);
        }

        public void Dispose()
        {
            Client.Dispose();
            Server.Dispose();
            Service.Open(); // nothing stays blocked behind a failed test
        }
    }

    private sealed class BoundedService : IBoundedService
    {
        private readonly SemaphoreSlim _entered = new(0);
        private readonly ConcurrentQueue<object> _outcomes = new();
        private readonly SemaphoreSlim _outcome = new(0);
        private volatile TaskCompletionSource _gate = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _adds;
        private int _enteredCount;

        public int Adds => Volatile.Read(ref _adds);

        public int EnteredCount => Volatile.Read(ref _enteredCount);

        public ConcurrentQueue<(int Sequence, int Thread, bool Pool)> Records { get; } = new();

        public SemaphoreSlim Recorded { get; } = new(0);

        public void Open() => _gate.TrySetResult();

        public void Close() => _gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        public async Task WaitEnteredAsync(int count)
        {
            for (int i = 0; i < count; i++)
            {
                Assert.True(await _entered.WaitAsync(Bound), $"{i} of {count} calls entered");
            }
        }

        public async Task<object> NextOutcomeAsync()
        {
            Assert.True(await _outcome.WaitAsync(Bound), "no outcome");
            Assert.True(_outcomes.TryDequeue(out object? outcome));
            return outcome;
        }

        public int Hold(int value)
        {
            Enter();
            WaitAtGate();
            return value;
        }

        public async Task<int> HoldAsync(int value)
        {
            Enter();
            await _gate.Task.WaitAsync(Bound);
            return value;
        }

        public int HoldBytes(byte[] data)
        {
            Enter();
            WaitAtGate();
            return data.Length;
        }

        public int Add(int a, int b)
        {
            Interlocked.Increment(ref _adds);
            return a + b;
        }

        public async Task<int> AddAsync(int a, int b)
        {
            await Task.Yield();
            return a + b;
        }

        public int Fail(int value) => throw new InvalidOperationException($"failed {value}");

        public int WaitForCancel(CancellationToken cancellationToken)
        {
            Enter();
            cancellationToken.WaitHandle.WaitOne(Bound);
            cancellationToken.ThrowIfCancellationRequested();
            return 0;
        }

        public void Record(int sequence)
        {
            Records.Enqueue((sequence, Environment.CurrentManagedThreadId, Thread.CurrentThread.IsThreadPoolThread));
            Recorded.Release();
        }

        public void CallBack(ICallback callback, int value)
        {
            try
            {
                AddOutcome(callback.Report(value));
            }
            catch (Exception ex)
            {
                AddOutcome(ex);
            }
        }

        public void CallBackAsync(IAsyncCallback callback, int value) => _ = Report(callback, value);

        public int Nest(ICallback callback, int depth) => callback.Nested(depth) + 1;

        public Task<int> ReportFirstAsync(ICallback callback, int value) => Task.FromResult(callback.Report(value));

        private async Task Report(IAsyncCallback callback, int value)
        {
            try
            {
                AddOutcome(await callback.ReportAsync(value));
            }
            catch (Exception ex)
            {
                AddOutcome(ex);
            }
        }

        private void AddOutcome(object outcome)
        {
            _outcomes.Enqueue(outcome);
            _outcome.Release();
        }

        private void Enter()
        {
            Interlocked.Increment(ref _enteredCount);
            _entered.Release();
        }

        private void WaitAtGate()
        {
            if (!_gate.Task.Wait(Bound))
            {
                throw new TimeoutException("the test never opened the gate");
            }
        }
    }

    /// <summary>The client's object: reports ten times the value; -1 blocks until released; nests back into the server.</summary>
    private sealed class Callback : ICallback, IAsyncCallback
    {
        public IBoundedService? Server { get; init; }

        public ConcurrentQueue<int> Reports { get; } = new();

        public SemaphoreSlim Entered { get; } = new(0);

        public ManualResetEventSlim Release { get; } = new(false);

        public int Report(int value)
        {
            if (value == -1)
            {
                Entered.Release();
                Release.Wait(Bound);
            }
            Reports.Enqueue(value);
            return value * 10;
        }

        public Task<int> ReportAsync(int value) => Task.FromResult(Report(value));

        public int Nested(int depth) => depth == 0 ? 0 : Server!.Nest(this, depth - 1);
    }
}
