using System.Runtime.CompilerServices;
using XCall.Tests.Contracts;
using Xunit;

namespace XCall.Tests.Shared;

/// <summary>
/// Streams of values (<see cref="IAsyncEnumerable{T}"/> results and parameters) over one transport. Each transport's
/// test project links this file and supplies the service.
/// </summary>
public abstract class StreamContractTests
{
    private static readonly TimeSpan s_patience = TimeSpan.FromSeconds(30);

    /// <summary>The service, with the default connection options.</summary>
    protected abstract IStreams Streams { get; }

    /// <summary>The service over a connection whose consumer asks for batches of <see cref="SmallBatch"/> items.</summary>
    protected abstract IStreams SmallBatchStreams { get; }

    /// <summary>The items of a batch <see cref="SmallBatchStreams"/> asks for.</summary>
    protected const int SmallBatch = 16;

    /// <summary>How far a producer may run ahead of its consumer over <see cref="SmallBatchStreams"/>: the batch being
    /// read and the one asked for ahead (a transport that does not batch stays within it too).</summary>
    protected virtual int PrefetchBound => 2 * SmallBatch;

    protected static async Task<List<T>> ToList<T>(IAsyncEnumerable<T> items)
    {
        var list = new List<T>();
        await foreach (T item in items)
        {
            list.Add(item);
        }
        return list;
    }

    private static string Key() => Guid.NewGuid().ToString("N");

    [Fact]
    public async Task Items_arrive_in_order_and_the_stream_completes()
    {
        List<int> items = await ToList(SmallBatchStreams.Range(5, 1000));
        Assert.Equal(Enumerable.Range(5, 1000), items);
    }

    [Fact]
    public async Task A_stream_returned_by_an_async_method_arrives_whole()
    {
        IAsyncEnumerable<int> items = await SmallBatchStreams.RangeLater(3, 100).WaitAsync(s_patience);
        Assert.Equal(Enumerable.Range(3, 100), await ToList(items).WaitAsync(s_patience));
    }

    [Fact]
    public async Task A_stream_inside_a_data_type_arrives_with_the_other_members()
    {
        LabelledItems labelled = SmallBatchStreams.Labelled("seven", 70);
        Assert.Equal("seven", labelled.Label);
        Assert.NotNull(labelled.Items);
        Assert.Equal(Enumerable.Range(0, 70), await ToList(labelled.Items).WaitAsync(s_patience));
    }

    [Fact]
    public async Task A_one_way_call_s_stream_parameter_is_read_after_the_call_returned()
    {
        string key = Key();
        SmallBatchStreams.Drain(key, Local(500));
        Assert.Equal(Enumerable.Range(1, 500).Sum(), await SmallBatchStreams.Drained(key).WaitAsync(s_patience));
    }

    [Fact]
    public async Task A_million_ints_arrive_whole()
    {
        long sum = 0;
        int count = 0;
        await foreach (int value in Streams.Range(0, 1_000_000))
        {
            sum += value;
            count++;
        }
        Assert.Equal(1_000_000, count);
        Assert.Equal(499_999_500_000L, sum);
    }

    [Fact]
    public async Task Strings_stream_through_their_marshaller()
    {
        List<string> words = await ToList(Streams.Words("w", 2500));
        Assert.Equal(Enumerable.Range(0, 2500).Select(i => "w" + i), words);
    }

    [Fact]
    public async Task Data_objects_stream_through_their_generated_marshaller()
    {
        List<Order> orders = await ToList(SmallBatchStreams.Orders(40));
        Assert.Equal(Enumerable.Range(0, 40), orders.Select(o => o.Id));
        Assert.All(orders, o => Assert.Equal(("c" + o.Id, "sku" + o.Id, o.Id), (o.Customer, Assert.Single(o.Lines).Sku, o.Lines[0].Qty)));
    }

    [Fact]
    public async Task A_method_returning_a_stream_calls_again_for_each_enumeration()
    {
        IAsyncEnumerable<int> stream = Streams.Range(1, 3);
        Assert.Equal([1, 2, 3], await ToList(stream));
        Assert.Equal([1, 2, 3], await ToList(stream));
    }

    [Fact]
    public async Task A_producer_that_runs_ahead_is_held_to_the_prefetch_bound()
    {
        string key = Key();
        await using IAsyncEnumerator<int> items = SmallBatchStreams.Endless(key, default).GetAsyncEnumerator();
        for (int consumed = 1; consumed <= 10 * SmallBatch; consumed++)
        {
            Assert.True(await items.MoveNextAsync());
            Assert.Equal(consumed - 1, items.Current);
            int produced = await SmallBatchStreams.Produced(key);
            Assert.InRange(produced, consumed, consumed + PrefetchBound);
        }
    }

    [Fact]
    public async Task The_connection_serves_other_calls_while_streams_are_open()
    {
        await using IAsyncEnumerator<int> first = SmallBatchStreams.Range(0, 100).GetAsyncEnumerator();
        await using IAsyncEnumerator<int> second = SmallBatchStreams.Range(1000, 100).GetAsyncEnumerator();
        for (int i = 0; i < 100; i++)
        {
            Assert.True(await first.MoveNextAsync());
            Assert.True(await second.MoveNextAsync());
            Assert.Equal((i, 1000 + i), (first.Current, second.Current));
            if (i % 25 == 0)
            {
                Assert.Equal(0, await SmallBatchStreams.Produced(Key()));
            }
        }
        Assert.False(await first.MoveNextAsync());
        Assert.False(await second.MoveNextAsync());
    }

    [Fact]
    public async Task Cancelling_the_consumer_cancels_the_producer()
    {
        string key = Key();
        using var cancel = new CancellationTokenSource();
        await using IAsyncEnumerator<int> items = Streams.Endless(key, default).GetAsyncEnumerator(cancel.Token);
        for (int i = 0; i < 3; i++)
        {
            Assert.True(await items.MoveNextAsync());
        }
        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await items.MoveNextAsync());
        Assert.Equal("cancelled", await Streams.Ended(key).WaitAsync(s_patience));
    }

    [Fact]
    public async Task Cancelling_reaches_a_producer_that_waits()
    {
        string key = Key();
        using var cancel = new CancellationTokenSource();
        await using IAsyncEnumerator<int> items = Streams.Waiting(key, cancel.Token).GetAsyncEnumerator();
        Assert.True(await items.MoveNextAsync());
        Assert.Equal(1, items.Current);
        ValueTask<bool> next = items.MoveNextAsync();
        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await next);
        Assert.Equal("cancelled", await Streams.Ended(key).WaitAsync(s_patience));
    }

    [Fact]
    public async Task Leaving_the_loop_early_disposes_the_producer()
    {
        string key = Key();
        int seen = 0;
        await foreach (int value in Streams.Endless(key, default))
        {
            if (++seen == 10)
            {
                break;
            }
        }
        Assert.Contains(await Streams.Ended(key).WaitAsync(s_patience), new[] { "disposed", "cancelled" });
    }

    [Fact]
    public async Task A_producer_exception_surfaces_after_its_items()
    {
        var items = new List<int>();
        RemoteInvocationException error = await Assert.ThrowsAsync<RemoteInvocationException>(async () =>
        {
            await foreach (int value in SmallBatchStreams.Failing(40))
            {
                items.Add(value);
            }
        });
        Assert.Equal(Enumerable.Range(0, 40), items);
        Assert.Equal(typeof(InvalidOperationException).FullName, error.RemoteTypeName);
        Assert.Equal("boom after 40", error.RemoteMessage);
    }

    private static async IAsyncEnumerable<int> Local(int count, TaskCompletionSource<bool>? ended = null)
    {
        try
        {
            for (int i = 1; i <= count; i++)
            {
                yield return i;
            }
        }
        finally
        {
            ended?.TrySetResult(true);
        }
        await Task.CompletedTask;
    }

    private static async IAsyncEnumerable<string> LocalWords(int count)
    {
        for (int i = 0; i < count; i++)
        {
            yield return "x" + i;
        }
        await Task.CompletedTask;
    }

    [Fact]
    public async Task A_stream_argument_is_pulled_by_the_callee()
    {
        Assert.Equal(100_000L * 100_001 / 2, await Streams.Sum(Local(100_000)));
        Assert.Equal(string.Join(",", Enumerable.Range(0, 1500).Select(i => "x" + i)), await Streams.Join(LocalWords(1500)));
    }

    private static async IAsyncEnumerable<int> Throwing(int before)
    {
        for (int i = 0; i < before; i++)
        {
            yield return i;
        }
        await Task.CompletedTask;
        throw new InvalidOperationException("caller's producer broke");
    }

    [Fact]
    public async Task A_stream_argument_whose_producer_throws_fails_the_call()
    {
        RemoteInvocationException error = await Assert.ThrowsAsync<RemoteInvocationException>(() => SmallBatchStreams.Sum(Throwing(50)));
        Assert.Contains("caller's producer broke", error.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_callee_that_stops_reading_disposes_the_callers_producer()
    {
        var ended = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.Equal(55L, await SmallBatchStreams.SumFirst(Local(1_000_000, ended), 10));
        Assert.True(await ended.Task.WaitAsync(s_patience));
    }
}
