using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>Where async calls' continuations run: a drainer off the receiving thread, handed on when one blocks.</summary>
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
            threads[i] = OnPool(_shapes.AddAsync(i, 1));
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
        Task trigger = _shapes.DelayAsync(100, CancellationToken.None);
        Assert.False(trigger.IsCompleted);
        Task blocker = BlockAfter(trigger);
        Assert.True(stuck.Wait(Generous));

        var behind = new Task<int>[100];
        for (int i = 0; i < behind.Length; i++)
        {
            behind[i] = _shapes.AddAsync(i, 1);
        }
        int[] sums = await Task.WhenAll(behind).WaitAsync(Generous); // only a hand-off by the watch lets these finish
        Assert.Equal(Enumerable.Range(1, behind.Length), sums);
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

    public void Dispose()
    {
        _client.Dispose();
        _server.Dispose();
    }
}
