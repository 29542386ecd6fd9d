using XCall.Cluster.Store;

namespace XCall.Cluster.Tests;

public sealed class ClusterStoreTests
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task Join_completes_for_every_rank_once_all_joined_with_cards_in_rank_order()
    {
        var store = new ClusterStore(3);
        Task<JoinReply> two = store.JoinAsync(2, 3, "c2", CancellationToken.None);
        Task<JoinReply> zero = store.JoinAsync(0, 3, "c0", CancellationToken.None);
        Assert.False(two.IsCompleted);
        JoinReply one = await store.JoinAsync(1, 3, "c1", CancellationToken.None);
        Assert.Equal(["c0", "c1", "c2"], one.Cards);
        Assert.Equal(-1, (await two.WaitAsync(s_hang)).FailedRank);
        Assert.Equal(["c0", "c1", "c2"], (await zero.WaitAsync(s_hang)).Cards);
    }

    [Fact]
    public async Task Join_refuses_a_rank_that_counts_another_size()
    {
        var store = new ClusterStore(2);
        await Assert.ThrowsAsync<InvalidOperationException>(() => store.JoinAsync(1, 3, "c", CancellationToken.None));
    }

    [Fact]
    public async Task A_watch_cancelled_before_its_rank_left_fails_the_rank_for_everyone()
    {
        var store = new ClusterStore(3);
        var failures = new List<int>();
        store.RankFailed += (rank, _) => failures.Add(rank);
        Task<JoinReply> join = store.JoinAsync(0, 3, "c0", CancellationToken.None);
        using var connection = new CancellationTokenSource();
        Task<int> watchOne = store.WatchAsync(1, CancellationToken.None);
        Task<int> watchTwo = store.WatchAsync(2, connection.Token);

        await connection.CancelAsync(); // what the server does to rank 2's calls when its connection closes

        Assert.Equal(2, await watchOne.WaitAsync(s_hang));
        JoinReply reply = await join.WaitAsync(s_hang);
        Assert.Equal(2, reply.FailedRank);
        Assert.Contains("closed", reply.Reason, StringComparison.Ordinal);
        Assert.Equal([2], failures);
        Assert.Equal(2, await store.WatchAsync(0, CancellationToken.None).WaitAsync(s_hang));
    }

    [Fact]
    public async Task Leave_completes_when_every_rank_left_and_ends_the_ranks_watch_without_a_failure()
    {
        var store = new ClusterStore(2);
        using var connection = new CancellationTokenSource();
        Task<int> watch = store.WatchAsync(1, connection.Token);
        Task<int> leaveOne = store.LeaveAsync(1, CancellationToken.None);
        Assert.Equal(-1, await watch.WaitAsync(s_hang));
        await connection.CancelAsync(); // its connection closing after it left is no failure
        Assert.False(leaveOne.IsCompleted);
        Assert.Equal(-1, await store.LeaveAsync(0, CancellationToken.None).WaitAsync(s_hang));
        Assert.Equal(-1, await leaveOne.WaitAsync(s_hang));
        Assert.True(await store.HasLeftAsync(1));
    }

    [Fact]
    public async Task Leave_completes_with_the_failed_rank_when_the_others_left()
    {
        var store = new ClusterStore(3);
        Task<int> leaveZero = store.LeaveAsync(0, CancellationToken.None);
        store.Fail(2, "test");
        Assert.False(leaveZero.IsCompleted);
        Assert.Equal(2, await store.LeaveAsync(1, CancellationToken.None).WaitAsync(s_hang));
        Assert.Equal(2, await leaveZero.WaitAsync(s_hang));
        Assert.False(await store.HasLeftAsync(2));
    }

    [Fact]
    public async Task A_key_keeps_its_first_value_and_wakes_its_waiters()
    {
        var store = new ClusterStore(1);
        Task<string> waiter = store.WaitAsync("k", CancellationToken.None);
        Assert.Null(await store.GetAsync("k"));
        Assert.Equal("v1", await store.AddAsync("k", "v1"));
        Assert.Equal("v1", await store.AddAsync("k", "v2"));
        Assert.Equal("v1", await waiter.WaitAsync(s_hang));
        Assert.Equal("v1", await store.GetAsync("k"));
    }

    [Fact]
    public async Task A_cancelled_wait_ends_and_leaves_no_waiter()
    {
        var store = new ClusterStore(1);
        using var cancel = new CancellationTokenSource();
        Task<string> waiter = store.WaitAsync("k", cancel.Token);
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiter.WaitAsync(s_hang));
        Assert.Equal("v", await store.AddAsync("k", "v"));
    }
}
