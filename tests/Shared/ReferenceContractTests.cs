using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using XCall.Runtime;
using XCall.Tests.Contracts;
using Xunit;

namespace XCall.Tests.Shared;

/// <summary>
/// Object references, callbacks, client-activated objects, per-call activation and remote exceptions,
/// over a framed transport. Each transport's test project links this file and supplies the connection.
/// </summary>
public abstract class ReferenceContractTests
{
    /// <summary>The service under test.</summary>
    protected abstract ICallbacks Callbacks { get; }

    /// <summary>A per-call service.</summary>
    protected abstract IActivation Activation { get; }

    /// <summary>The client's connection (its object table holds what the client exposes).</summary>
    protected abstract XCallConnection ClientConnection { get; }

    /// <summary>Opens a second, separate connection to the same service.</summary>
    protected abstract (ICallbacks Service, IDisposable Connection) OpenSeparate();

    /// <summary>A client object the server calls back.</summary>
    protected sealed class Recorder(ICallbacks? service = null) : ICallback
    {
        public ConcurrentQueue<int> Reports { get; } = new();

        public int Report(int value)
        {
            Reports.Enqueue(value);
            return value * 10;
        }

        public int Nested(int depth) => depth <= 0 ? 0 : service!.Nest(this, depth - 1);
    }

    [Fact]
    public void Server_calls_back_through_a_client_object()
    {
        var recorder = new Recorder();
        Assert.Equal(150, Callbacks.CallBack(recorder, 5));
        Assert.Equal([1, 2, 3, 4, 5], recorder.Reports);
    }

    [Fact]
    public async Task Async_method_calls_back_through_a_client_object()
    {
        var recorder = new Recorder();
        Assert.Equal(60, await Callbacks.CallBackAsync(recorder, 3));
        Assert.Equal([1, 2, 3], recorder.Reports);
    }

    [Fact]
    public void Callback_that_calls_the_server_again_nests()
    {
        var recorder = new Recorder(Callbacks);
        Assert.Equal(5, Callbacks.Nest(recorder, 4));
    }

    /// <summary>
    /// Where a call received with the default dispatch runs on the server (see <c>Callbacks.ThreadKind</c>): "receive"
    /// where the transport lets the receiving thread run it (shared memory), else "pool".
    /// </summary>
    protected virtual string DefaultDispatchThread => "pool";

    /// <summary>The client's end of a chain of nested calls: records its threads and calls the server again.</summary>
    private sealed class Tracer(ICallbacks service) : ITracer
    {
        public ConcurrentQueue<int> Threads { get; } = new();

        public string Trace(int depth)
        {
            Threads.Enqueue(Environment.CurrentManagedThreadId);
            return "client>" + service.Trace(this, depth - 1);
        }
    }

    /// <summary>The trace of a chain of <paramref name="callbacks"/> callbacks, each served where <paramref name="server"/> says.</summary>
    private static string Chain(string server, int callbacks) =>
        string.Join(">client>", Enumerable.Repeat(server, callbacks + 1));

    [Fact]
    public void Callback_from_a_method_run_by_the_default_dispatch_runs_on_the_callers_thread()
    {
        // Over shared memory the server runs the method on its receiving thread, which then reads the callback's
        // reply itself; the call nested in the callback runs on that same thread, which waits for the callback.
        var tracer = new Tracer(Callbacks);
        int me = Environment.CurrentManagedThreadId;
        Assert.Equal(Chain(DefaultDispatchThread, 1), Callbacks.Trace(tracer, 1));
        Assert.Equal([me], tracer.Threads);
    }

    [Fact]
    public void Callback_chain_of_depth_3_runs_each_level_on_the_thread_that_waits_for_it()
    {
        var tracer = new Tracer(Callbacks);
        int me = Environment.CurrentManagedThreadId;
        for (int round = 0; round < 20; round++)
        {
            Assert.Equal(Chain(DefaultDispatchThread, 3), Callbacks.Trace(tracer, 3));
        }
        Assert.Equal(60, tracer.Threads.Count);
        Assert.All(tracer.Threads, thread => Assert.Equal(me, thread));
    }

    [Fact]
    public void Callbacks_complete_while_other_callers_of_the_connection_wait_in_blocked_calls()
    {
        // Three calls block in the server on the same connection (over shared memory each first holds the receiving
        // thread, which hands the receiving over); the callback chain and the call that opens the gate still run.
        const int Waiters = 3;
        string gate = Guid.NewGuid().ToString("N");
        var waiting = new Task<bool>[Waiters];
        for (int i = 0; i < Waiters; i++)
        {
            waiting[i] = Task.Factory.StartNew(() => Callbacks.WaitForGate(gate, 120_000), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        }
        Assert.True(SpinWait.SpinUntil(() => Callbacks.GateWaiters(gate) == Waiters || waiting.Any(t => t.IsCompleted), TimeSpan.FromSeconds(60)), "the blocked calls did not all arrive");
        Assert.All(waiting, t => Assert.False(t.IsCompleted, t.Exception?.ToString()));

        var recorder = new Recorder();
        Assert.Equal(150, Callbacks.CallBack(recorder, 5));
        var tracer = new Tracer(Callbacks);
        Assert.Equal(Chain(DefaultDispatchThread, 3), Callbacks.Trace(tracer, 3));
        Assert.All(waiting, t => Assert.False(t.IsCompleted, t.Exception?.ToString()));

        Callbacks.OpenGate(gate);
        Assert.True(Task.WaitAll(waiting, TimeSpan.FromSeconds(60)), "the blocked calls did not return once the gate opened");
        Assert.All(waiting, t => Assert.True(t.Result));
    }

    /// <summary>A client object that records the thread each callback ran on, under a lock its caller may hold.</summary>
    private sealed class ThreadRecorder(object gate) : ICallback
    {
        public ConcurrentQueue<int> Threads { get; } = new();

        public int Report(int value)
        {
            lock (gate)
            {
                Threads.Enqueue(Environment.CurrentManagedThreadId);
            }
            return value;
        }

        public int Nested(int depth) => 0;
    }

    [Fact]
    public void Callback_runs_on_the_thread_that_waits_for_the_call_even_under_the_callers_lock()
    {
        // The caller holds a lock the callback needs. A callback run on another thread would wait for the lock
        // while the caller waits for the call: a deadlock. A call nested in the caller's own call runs on the
        // caller's thread, as a local callback would.
        object gate = new();
        var recorder = new ThreadRecorder(gate);
        int result = 0;
        int callerThread = 0;
        Exception? failure = null;
        var caller = new Thread(() =>
        {
            callerThread = Environment.CurrentManagedThreadId;
            try
            {
                lock (gate)
                {
                    result = Callbacks.CallBack(recorder, 4);
                }
            }
            catch (Exception ex)
            {
                failure = ex;
            }
        })
        {
            IsBackground = true,
        };
        caller.Start();
        Assert.True(caller.Join(TimeSpan.FromSeconds(60)), "the call did not return: its callbacks waited for the caller's lock");
        Assert.Null(failure);
        Assert.Equal(1 + 2 + 3 + 4, result);
        Assert.Equal([callerThread, callerThread, callerThread, callerThread], recorder.Threads);
    }

    private sealed class RendezvousCallback : IAsyncCallback
    {
        private readonly CountdownEvent _both = new(2);

        public Task<int> ReportAsync(int value)
        {
            _both.Signal();
            return Task.FromResult(_both.Wait(TimeSpan.FromSeconds(5)) ? value : -100);
        }
    }

    [Fact]
    public void Async_callbacks_started_together_run_concurrently_not_queued_on_the_caller()
    {
        var callback = new RendezvousCallback();
        int result = 0;
        var caller = new Thread(() => result = Callbacks.AsyncPair(callback)) { IsBackground = true };
        caller.Start();
        Assert.True(caller.Join(TimeSpan.FromSeconds(30)));
        Assert.Equal(3, result);
    }

    private sealed class YieldingCallback : IAsyncCallback
    {
        public async Task<int> ReportAsync(int value)
        {
            await Task.Yield();
            return value;
        }
    }

    /// <summary>A UI-like context: posts run only when the owning thread pumps.</summary>
    private sealed class QueueContext : SynchronizationContext
    {
        public BlockingCollection<(SendOrPostCallback, object?)> Queue { get; } = new();

        public override void Post(SendOrPostCallback d, object? state) => Queue.Add((d, state));
    }

    [Fact]
    public void Async_callback_does_not_deadlock_a_caller_with_a_thread_affine_context()
    {
        var context = new QueueContext();
        int result = 0;
        var caller = new Thread(() =>
        {
            SynchronizationContext.SetSynchronizationContext(context);
            result = Callbacks.AsyncOnce(new YieldingCallback(), 7);
        })
        { IsBackground = true };
        caller.Start();
        bool done = caller.Join(TimeSpan.FromSeconds(10));
        int pumped = 0;
        if (!done)
        {
            // Unblock: run what was posted to the caller's (blocked) context here.
            while (context.Queue.TryTake(out var item, TimeSpan.FromSeconds(1)))
            {
                pumped++;
                item.Item1(item.Item2);
            }
            caller.Join(TimeSpan.FromSeconds(10));
        }
        Assert.True(done, $"deadlock: the callback's continuation was posted to the blocked caller's context ({pumped} posts)");
        Assert.Equal(7, result);
    }

    [Fact]
    public void Many_callers_with_callbacks_under_their_locks_and_nesting_all_complete()
    {
        const int Threads = 6;
        const int Rounds = 150;
        var failures = new ConcurrentQueue<string>();
        var threads = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            int id = t;
            threads[t] = new Thread(() =>
            {
                object gate = new();
                var recorder = new ThreadRecorder(gate);
                var nester = new Recorder(Callbacks);
                int me = Environment.CurrentManagedThreadId;
                try
                {
                    for (int i = 0; i < Rounds; i++)
                    {
                        int n = 1 + ((i + id) % 4);
                        lock (gate)
                        {
                            int sum = Callbacks.CallBack(recorder, n);
                            if (sum != n * (n + 1) / 2)
                            {
                                failures.Enqueue($"t{id} round {i}: sum {sum}");
                            }
                        }
                        int depth = (i + id) % 4;
                        int nested = Callbacks.Nest(nester, depth);
                        if (nested != depth + 1)
                        {
                            failures.Enqueue($"t{id} round {i}: nest {nested}");
                        }
                    }
                }
                catch (Exception ex)
                {
                    failures.Enqueue($"t{id}: {ex}");
                }
                if (recorder.Threads.Any(x => x != me))
                {
                    failures.Enqueue($"t{id}: a callback ran on another thread");
                }
            })
            { IsBackground = true };
        }
        foreach (Thread thread in threads)
        {
            thread.Start();
        }
        foreach (Thread thread in threads)
        {
            Assert.True(thread.Join(TimeSpan.FromSeconds(120)), "a caller hung");
        }
        Assert.Empty(failures);
    }

    [Fact]
    public void Many_callbacks_in_a_row_all_arrive()
    {
        var recorder = new Recorder();
        Assert.Equal(10 * 200 * 201 / 2, Callbacks.CallBack(recorder, 200));
        Assert.Equal(200, recorder.Reports.Count);
    }

    [Fact]
    public void Client_object_sent_back_arrives_as_itself()
    {
        var recorder = new Recorder();
        Assert.Same(recorder, Callbacks.Echo(recorder));
        Assert.Null(Callbacks.Echo(null));
    }

    [Fact]
    public void Same_object_sent_twice_yields_one_proxy()
    {
        var recorder = new Recorder();
        Assert.True(Callbacks.Same(recorder, recorder));
        Assert.False(Callbacks.Same(recorder, new Recorder()));
        Assert.False(Callbacks.Hold(recorder));
        Assert.True(Callbacks.Hold(recorder));
        Callbacks.DropHeld(dispose: true);
    }

    [Fact]
    public void Object_reference_inside_a_data_object_is_callable()
    {
        var recorder = new Recorder();
        Assert.Equal(70, Callbacks.CallHolder(new CallbackHolder { Name = "h", Callback = recorder }, 7));
        Assert.Equal([7], recorder.Reports);
    }

    [Fact]
    public async Task Factory_returns_distinct_callable_objects()
    {
        ICounter first = Callbacks.CreateCounter(1);
        ICounter second = Callbacks.CreateCounter(10);
        Assert.NotSame(first, second);
        Assert.Equal(2, first.Next());
        Assert.Equal(11, second.Next());
        Assert.Equal(3, await first.NextAsync());
        ICounter third = await Callbacks.CreateCounterAsync(100);
        Assert.Equal(101, third.Next());
        Assert.Equal(4, first.Next());
    }

    [Fact]
    public void Same_server_object_returned_twice_yields_the_same_proxy()
    {
        ICounter a = Callbacks.SharedCounter();
        ICounter b = Callbacks.SharedCounter();
        Assert.Same(a, b);
        int next = a.Next();
        Assert.Equal(next + 1, b.Next());
    }

    [Fact]
    public void Owner_forgets_the_object_when_the_holder_disposes_its_proxy()
    {
        int before = ClientConnection.ExposedObjectCount;
        Callbacks.Hold(new Recorder());
        Assert.True(ClientConnection.ExposedObjectCount >= before + 1);
        Callbacks.DropHeld(dispose: true);
        Assert.True(WaitFor(() => ClientConnection.ExposedObjectCount <= before, () => { }), $"{ClientConnection.ExposedObjectCount} objects still exposed");
    }

    [Fact]
    public void Owner_forgets_the_object_when_the_holder_collects_its_proxy()
    {
        int before = ClientConnection.ExposedObjectCount;
        Callbacks.Hold(new Recorder());
        Assert.True(ClientConnection.ExposedObjectCount >= before + 1);
        Callbacks.DropHeld(dispose: false);
        Assert.True(WaitFor(() => ClientConnection.ExposedObjectCount <= before, Callbacks.CollectGarbage), $"{ClientConnection.ExposedObjectCount} objects still exposed");
    }

    [Fact]
    public void Disposed_proxy_refuses_calls()
    {
        ICounter counter = Callbacks.CreateCounter(1);
        ((IDisposable)counter).Dispose();
        Assert.Throws<ObjectDisposedException>(() => counter.Next());
        Assert.Throws<ObjectDisposedException>(() => counter.Advance(1));
        Assert.Equal(2, Callbacks.CreateCounter(1).Next());
    }

    [Fact]
    public void One_way_calls_on_a_reference_all_reach_its_object()
    {
        // Unmanaged arguments of a one-way call are written on the proxy's stack; on a reference the frame still goes
        // the way that checks its link. Each Next adds one, so once every Advance ran, the value less the Next calls
        // made is exactly what the Advance calls added.
        ICounter counter = Callbacks.CreateCounter(0);
        for (int i = 0; i < 100; i++)
        {
            counter.Advance(1000);
        }
        int calls = 0;
        int value;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        do
        {
            value = counter.Next();
            calls++;
        }
        while (value - calls < 100_000 && clock.Elapsed < TimeSpan.FromSeconds(30));
        Assert.Equal(100_000, value - calls);
    }

    [Fact]
    public void Reference_fails_with_disconnected_after_its_connection_closes()
    {
        (ICallbacks service, IDisposable connection) = OpenSeparate();
        ICounter counter = service.CreateCounter(5);
        Assert.Equal(6, counter.Next());
        connection.Dispose();
        Assert.Throws<XCallDisconnectedException>(() => counter.Next());
    }

    [Fact]
    public void Per_call_activation_meets_a_new_instance_every_call()
    {
        int first = Activation.InstanceId();
        int second = Activation.InstanceId();
        int third = Activation.InstanceId();
        Assert.NotEqual(first, second);
        Assert.NotEqual(second, third);
        Assert.NotEqual(first, third);
    }

    [Fact]
    public void Remote_exception_keeps_inner_exception_and_string_data()
    {
        var ex = Assert.Throws<RemoteInvocationException>(() => Callbacks.Throw("inner"));
        Assert.Equal("System.InvalidOperationException", ex.RemoteTypeName);
        Assert.Equal("outer", ex.RemoteMessage);
        Assert.Contains(nameof(XCall.Tests.Contracts.Callbacks.Throw), ex.RemoteStackTrace);
        Assert.Equal("value", ex.Data["key"]);
        Assert.False(ex.Data.Contains("number"));
        var inner = Assert.IsType<RemoteInvocationException>(ex.InnerException);
        Assert.Equal("System.ArgumentException", inner.RemoteTypeName);
        Assert.StartsWith("inner problem", inner.RemoteMessage);
        Assert.Same(inner, Assert.Single(ex.InnerExceptions));
    }

    [Fact]
    public void Remote_aggregate_exception_keeps_every_inner_exception()
    {
        var ex = Assert.Throws<RemoteInvocationException>(() => Callbacks.Throw("aggregate"));
        Assert.Equal("System.AggregateException", ex.RemoteTypeName);
        Assert.Equal(["System.TimeoutException", "System.NotSupportedException"], ex.InnerExceptions.Select(e => e.RemoteTypeName));
        Assert.Equal(["first", "second"], ex.InnerExceptions.Select(e => e.RemoteMessage));
    }

    [Fact]
    public void Known_framework_exception_is_recreated_as_its_own_type()
    {
        var ex = Assert.Throws<RemoteInvocationException>(() => Callbacks.Throw("KeyNotFoundException"));
        var local = Assert.IsType<KeyNotFoundException>(ex.ToLocalException());
        Assert.Equal("missing key", local.Message);
        Assert.Same(ex, local.InnerException);
        Assert.Contains(nameof(XCall.Tests.Contracts.Callbacks.Throw), (string?)local.Data[RemoteInvocationException.RemoteStackTraceKey]);

        var range = Assert.Throws<RemoteInvocationException>(() => Callbacks.Throw("ArgumentOutOfRangeException"));
        Assert.IsType<ArgumentOutOfRangeException>(range.ToLocalException());
    }

    [Fact]
    public void Exception_whose_message_cannot_be_read_still_arrives_by_type_and_the_connection_stays_usable()
    {
        var ex = Assert.Throws<RemoteInvocationException>(() => Callbacks.Throw("unreadable"));
        Assert.Equal(typeof(Callbacks.UnreadableException).FullName, ex.RemoteTypeName);
        Assert.Contains("could not be read", ex.RemoteMessage);
        var recorder = new Recorder();
        Assert.Equal(60, Callbacks.CallBack(recorder, 3));
    }

    [Fact]
    public void Exception_whose_message_calls_the_caller_back_arrives_whole()
    {
        // The message is read before the error frame is begun: a call made while reading it is an ordinary callback.
        var recorder = new Recorder();
        var ex = Assert.Throws<RemoteInvocationException>(() => Callbacks.ThrowReporting(recorder));
        Assert.Equal(typeof(Callbacks.ReportingException).FullName, ex.RemoteTypeName);
        Assert.Equal("reported 70", ex.RemoteMessage);
        Assert.Equal(60, Callbacks.CallBack(recorder, 3));
    }

    [Fact]
    public void A_call_made_while_another_calls_arguments_are_written_is_refused_and_the_connection_goes_on()
    {
        // The getter runs while the outer call's frame is open on this thread; the inner call cannot be sent
        // inside it. Both calls fail on this thread alone, nothing reaches the server, and the next call works.
        Weighed.Ask = () => Callbacks.Weigh(new Weighed { Grams = 1 });
        try
        {
            var ex = Assert.Throws<InvalidOperationException>(() => Callbacks.Weigh(new Weighed { Grams = 5 }));
            Assert.Contains("while the arguments of another call on the same connection were being written", ex.Message);
        }
        finally
        {
            Weighed.Ask = null;
        }
        Assert.Equal(5, Callbacks.Weigh(new Weighed { Grams = 5 }));
        Assert.Equal(150, Callbacks.CallBack(new Recorder(), 5));
    }

    [Fact]
    public void Unknown_exception_type_is_not_recreated()
    {
        var ex = Assert.Throws<RemoteInvocationException>(() => Callbacks.Throw("FormatException"));
        Assert.Equal("System.FormatException", ex.RemoteTypeName);
        Assert.Same(ex, ex.ToLocalException());
    }

    /// <summary>Polls <paramref name="condition"/> a bounded number of times, running <paramref name="between"/> in between (no sleeps).</summary>
    protected static bool WaitFor(Func<bool> condition, Action between)
    {
        for (int i = 0; i < 200; i++)
        {
            if (condition())
            {
                return true;
            }
            between();
            Thread.Yield();
        }
        return condition();
    }

    /// <summary>Creates a proxy in a frame of its own, so nothing on this stack keeps it alive.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    protected static void TouchAndDrop(Func<ICounter> create) => create().Next();
}
