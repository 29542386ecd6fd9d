using System.Globalization;
using XCall.Runtime;
using XCall.Runtime.CompilerServices;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>
/// Where async calls' continuations run (a drainer off the receiving thread, handed on when one blocks), what they
/// get (async calls completed without a state machine: SendForTask / SendForValueTask), and the call table's free list.
/// </summary>
public sealed class CompletionDrainTests : IDisposable
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);
    private readonly XCallConnection _client;
    private readonly XCallConnection _server;
    private readonly IShapes _shapes;

    public CompletionDrainTests()
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        _server = new XCallConnection(serverChannel);
        _server.ExposeRoot(new Shapes(), ContractRegistry.Get<IShapes>().Dispatcher);
        _server.Start();
        _client = new XCallConnection(clientChannel);
        _client.Start();
        _shapes = _client.GetProxy<IShapes>();
    }

    [Fact]
    public async Task Continuations_run_on_the_thread_pool_never_on_the_receiving_thread()
    {
        var threads = new Task<bool>[500];
        for (int i = 0; i < threads.Length; i++)
        {
            // Made on a pool thread: a call whose reply is in before the await runs its continuation there, inline.
            int a = i;
            threads[i] = Task.Run(() => OnPool(_shapes.AddAsync(a, 1)));
        }
        bool[] onPool = await Task.WhenAll(threads).WaitAsync(Generous);
        Assert.All(onPool, Assert.True); // the in-memory channel's receiving thread is a dedicated thread, not the pool's

        static async Task<bool> OnPool(Task<int> call)
        {
            await call.ConfigureAwait(false);
            return Thread.CurrentThread.IsThreadPoolThread;
        }
    }

    [Fact]
    public async Task A_continuation_that_makes_a_sync_call_hands_the_other_calls_to_a_new_drainer()
    {
        using var delay = new CancellationTokenSource();
        Task trigger = _shapes.DelayAsync(100, delay.Token);
        Assert.False(trigger.IsCompleted);
        Task<int> chained = AddAfter(trigger);
        Assert.Equal(5, await chained.WaitAsync(Generous));
        Assert.True(_client.Completions.HandOffs >= 1, $"hand-offs: {_client.Completions.HandOffs}");

        async Task<int> AddAfter(Task call)
        {
            await call.ConfigureAwait(false);
            return _shapes.Add(2, 3); // on the drainer's thread: a sync call there hands the drain on first
        }
    }

    [Fact]
    public async Task A_continuation_stuck_for_a_whole_watch_period_is_handed_off()
    {
        using var stuck = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        // A token and string results: these calls complete through the drainer (an int result would not).
        using var live = new CancellationTokenSource();
        Task trigger = _shapes.DelayAsync(100, live.Token);
        Assert.False(trigger.IsCompleted);
        Task blocker = BlockAfter(trigger);
        Assert.True(stuck.Wait(Generous));

        var behind = new Task<string>[100];
        for (int i = 0; i < behind.Length; i++)
        {
            behind[i] = _shapes.ConcatAsync("b", i.ToString(CultureInfo.InvariantCulture)).AsTask();
        }
        string[] concats = await Task.WhenAll(behind).WaitAsync(Generous); // only a hand-off by the watch lets these finish
        Assert.Equal(Enumerable.Range(0, behind.Length).Select(i => "b" + i.ToString(CultureInfo.InvariantCulture)), concats);
        Assert.True(_client.Completions.HandOffs >= 1);
        release.Set();
        await blocker.WaitAsync(Generous);

        async Task BlockAfter(Task call)
        {
            await call.ConfigureAwait(false);
            stuck.Set();
            release.Wait(Generous);
        }
    }

    [Fact]
    public async Task Pipelined_calls_of_every_return_kind_end_with_their_own_results()
    {
        const int Count = 3_000;
        using var cancel = new CancellationTokenSource();
        var sums = new Task<int>[Count];
        var concats = new ValueTask<string>[Count];
        var pings = new ValueTask[Count];
        var failures = new Task[Count];
        var delays = new Task[Count];
        for (int i = 0; i < Count; i++)
        {
            // Each kind at its own step, so the calls in flight interleave: direct (no token) and waited (a token).
            switch (i % 5)
            {
                case 0: sums[i] = _shapes.AddAsync(i, 1); break;
                case 1: concats[i] = _shapes.ConcatAsync("c", i.ToString(System.Globalization.CultureInfo.InvariantCulture)); break;
                case 2: pings[i] = _shapes.PingAsync(); break;
                case 3: failures[i] = _shapes.FailAsync("no " + i); break;
                default: delays[i] = _shapes.DelayAsync(600_000, cancel.Token); break;
            }
        }
        cancel.Cancel(); // the delays are in flight: each ends cancelled, and nothing else does
        for (int i = 0; i < Count; i++)
        {
            switch (i % 5)
            {
                case 0:
                    Assert.Equal(i + 1, await sums[i].WaitAsync(Generous));
                    break;
                case 1:
                    Assert.Equal("c" + i.ToString(System.Globalization.CultureInfo.InvariantCulture), await concats[i].AsTask().WaitAsync(Generous));
                    break;
                case 2:
                    await pings[i].AsTask().WaitAsync(Generous);
                    break;
                case 3:
                    RemoteInvocationException failed = await Assert.ThrowsAsync<RemoteInvocationException>(() => failures[i].WaitAsync(Generous));
                    Assert.Equal("no " + i, failed.RemoteMessage);
                    break;
                default:
                    await Assert.ThrowsAnyAsync<OperationCanceledException>(() => delays[i].WaitAsync(Generous));
                    Assert.True(delays[i].IsCanceled);
                    break;
            }
        }
        Assert.Equal(6, await _shapes.AddAsync(5, 1).WaitAsync(Generous)); // the connection still serves
    }

    [Fact]
    public async Task Calls_with_unmanaged_results_complete_where_replied_with_continuations_on_the_pool()
    {
        const int Count = 2_000;
        long drained = _client.Completions.Completed;
        var sums = new Task<int>[Count];
        var pings = new ValueTask[Count];
        var continuedOn = new Task<string?>[Count];
        for (int i = 0; i < Count; i++)
        {
            sums[i] = _shapes.AddAsync(i, 3);
            pings[i] = _shapes.PingAsync();
            // Registered while the call is usually in flight: a task completed on the receiving thread must still run
            // a continuation that asks to run synchronously elsewhere (its source runs continuations asynchronously).
            continuedOn[i] = sums[i].ContinueWith(static _ => Thread.CurrentThread.Name, CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(i + 3, await sums[i].WaitAsync(Generous));
            await pings[i].AsTask().WaitAsync(Generous);
        }
        string?[] names = await Task.WhenAll(continuedOn).WaitAsync(Generous);
        Assert.DoesNotContain(names, name => name is not null && name.StartsWith("mem-receive", StringComparison.Ordinal));
        Assert.Equal(drained, _client.Completions.Completed); // none went through the drainer
    }

    [Fact]
    public async Task Calls_completed_where_replied_go_back_to_the_pool_whatever_the_caller_does()
    {
        var discarded = new Task<int>[1_000];
        for (int i = 0; i < discarded.Length; i++)
        {
            discarded[i] = _shapes.AddAsync(i, 1); // never awaited nor read below until every call is done
        }
        int[] early = await Task.Run(() =>
        {
            var read = new int[100];
            for (int i = 0; i < read.Length; i++)
            {
                read[i] = _shapes.AddAsync(i, 2).Result; // read before its reply, usually: blocks for it
            }
            return read;
        }).WaitAsync(Generous);
        Assert.Equal(Enumerable.Range(2, 100), early);
        await Task.WhenAll(discarded).WaitAsync(Generous);
        // Every call object is back: a call's id is cleared when it is given back.
        Assert.All(_client.CallSlots, call => Assert.Equal(0UL, call?.CallId ?? 0));
        Assert.Equal(7, await _shapes.AddAsync(5, 2).WaitAsync(Generous));
    }

    [Fact]
    public async Task A_value_task_read_before_its_reply_blocks_for_it_and_discarded_ones_leave_the_connection_serving()
    {
        for (int i = 0; i < 1_000; i++)
        {
            _ = _shapes.ConcatAsync("dropped", "call"); // never awaited: its call still goes back when the reply is in
        }
        string[] results = await Task.Run(() =>
        {
            var read = new string[100];
            for (int i = 0; i < read.Length; i++)
            {
                // The server yields before it answers, so the reply is usually still on its way here.
                read[i] = _shapes.ConcatAsync("x", i.ToString(CultureInfo.InvariantCulture)).Result;
            }
            return read;
        }).WaitAsync(Generous);
        Assert.Equal(Enumerable.Range(0, 100).Select(i => "x" + i.ToString(CultureInfo.InvariantCulture)), results);
        Assert.Equal("ab", await _shapes.ConcatAsync("a", "b").AsTask().WaitAsync(Generous));
    }

    [Fact]
    public async Task Pipelined_calls_fail_when_the_connection_closes_under_them()
    {
        var sums = new Task<int>[2_000];
        var concats = new ValueTask<string>[2_000];
        using var held = new CancellationTokenSource();
        Task delay = _shapes.DelayAsync(600_000, held.Token); // in flight until the close, whatever the timing
        for (int i = 0; i < sums.Length; i++)
        {
            sums[i] = _shapes.AddAsync(i, 2);
            concats[i] = _shapes.ConcatAsync("a", "b");
        }
        _server.Dispose();
        _client.Dispose();
        await Assert.ThrowsAnyAsync<Exception>(() => delay.WaitAsync(Generous));
        Assert.False(delay.IsCompletedSuccessfully);
        for (int i = 0; i < sums.Length; i++)
        {
            // Each call either got its reply before the close or failed with it: none waits for ever, none gets another's.
            Task<int> sum = sums[i];
            await Task.WhenAny(sum).WaitAsync(Generous);
            if (sum.IsCompletedSuccessfully)
            {
                Assert.Equal(i + 2, sum.Result);
            }
            else
            {
                Assert.IsAssignableFrom<XCallException>(sum.Exception!.InnerException);
            }
            Task<string> concat = concats[i].AsTask();
            await Task.WhenAny(concat).WaitAsync(Generous);
            if (concat.IsCompletedSuccessfully)
            {
                Assert.Equal("ab", concat.Result);
            }
            else
            {
                Assert.IsAssignableFrom<XCallException>(concat.Exception!.InnerException);
            }
        }
    }

    [Fact]
    public void The_call_table_never_lends_one_call_to_two_renters_at_once()
    {
        var table = new CallTable(_client);
        const int Threads = 4;
        const int Rounds = 20_000;
        var holders = new int[1024];
        int clashes = 0;
        var workers = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            int me = t + 1;
            workers[t] = new Thread(() =>
            {
                var random = new Random(me);
                var mine = new List<PendingCall>();
                for (int round = 0; round < Rounds; round++)
                {
                    for (int k = random.Next(1, 8); k > 0; k--)
                    {
                        PendingCall call = table.Rent(1, isAsync: round % 2 == 0);
                        if (Interlocked.CompareExchange(ref holders[call.Slot], me, 0) != 0)
                        {
                            Interlocked.Increment(ref clashes);
                        }
                        mine.Add(call);
                    }
                    foreach (PendingCall call in mine)
                    {
                        Volatile.Write(ref holders[call.Slot], 0);
                        table.Return(call);
                    }
                    mine.Clear();
                }
            });
            workers[t].Start();
        }
        foreach (Thread worker in workers)
        {
            Assert.True(worker.Join(Generous));
        }
        Assert.Equal(0, clashes);
        // Returned calls are reused: at most as many calls as were ever held at once (the spare's slot 0 included).
        int made = table.Snapshot().Count(call => call is not null);
        Assert.InRange(made, 1, Threads * 7 + 1);
    }

    public void Dispose()
    {
        _client.Dispose();
        _server.Dispose();
    }
}
