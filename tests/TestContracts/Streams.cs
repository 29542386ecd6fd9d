using System.Collections.Concurrent;
using System.Runtime.CompilerServices;

namespace XCall.Tests.Contracts;

/// <summary>The server side of <see cref="IStreams"/>.</summary>
public class Streams : IStreams
{
    private readonly ConcurrentDictionary<string, Watch> _watches = new();

    /// <summary>What a test sees of one producer.</summary>
    private sealed class Watch
    {
        public int Produced;

        public TaskCompletionSource<string> Ended { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }

    private Watch WatchOf(string key) => _watches.GetOrAdd(key, static _ => new Watch());

    /// <inheritdoc/>
    public async IAsyncEnumerable<int> Range(int start, int count)
    {
        for (int i = 0; i < count; i++)
        {
            yield return start + i;
        }
    }

    /// <inheritdoc/>
    public async IAsyncEnumerable<string> Words(string prefix, int count)
    {
        for (int i = 0; i < count; i++)
        {
            yield return prefix + i;
        }
    }

    /// <inheritdoc/>
    public async IAsyncEnumerable<Order> Orders(int count)
    {
        for (int i = 0; i < count; i++)
        {
            yield return new Order { Id = i, Customer = "c" + i, Lines = [new Line { Sku = "sku" + i, Qty = i }] };
        }
    }

    /// <inheritdoc/>
    public async IAsyncEnumerable<int> Endless(string key, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        Watch watch = WatchOf(key);
        try
        {
            for (int i = 0; ; i++)
            {
                cancellationToken.ThrowIfCancellationRequested();
                Interlocked.Increment(ref watch.Produced);
                yield return i;
            }
        }
        finally
        {
            watch.Ended.TrySetResult(cancellationToken.IsCancellationRequested ? "cancelled" : "disposed");
        }
    }

    /// <inheritdoc/>
    public async IAsyncEnumerable<int> Waiting(string key, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        Watch watch = WatchOf(key);
        try
        {
            Interlocked.Increment(ref watch.Produced);
            yield return 1;
            await Task.Delay(Timeout.Infinite, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            watch.Ended.TrySetResult(cancellationToken.IsCancellationRequested ? "cancelled" : "disposed");
        }
    }

    /// <inheritdoc/>
    public async IAsyncEnumerable<int> Failing(int before)
    {
        for (int i = 0; i < before; i++)
        {
            yield return i;
        }
        throw new InvalidOperationException($"boom after {before}");
    }

    /// <inheritdoc/>
    public Task<int> Produced(string key) => Task.FromResult(Volatile.Read(ref WatchOf(key).Produced));

    /// <inheritdoc/>
    public Task<string> Ended(string key) => WatchOf(key).Ended.Task;

    /// <inheritdoc/>
    public async Task<long> Sum(IAsyncEnumerable<int> values)
    {
        long sum = 0;
        await foreach (int value in values.ConfigureAwait(false))
        {
            sum += value;
        }
        return sum;
    }

    /// <inheritdoc/>
    public async Task<string> Join(IAsyncEnumerable<string> words)
    {
        var all = new List<string>();
        await foreach (string word in words.ConfigureAwait(false))
        {
            all.Add(word);
        }
        return string.Join(",", all);
    }

    /// <inheritdoc/>
    public async Task<long> SumFirst(IAsyncEnumerable<int> values, int count)
    {
        long sum = 0;
        int taken = 0;
        await foreach (int value in values.ConfigureAwait(false))
        {
            if (taken++ == count)
            {
                break;
            }
            sum += value;
        }
        return sum;
    }

    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, TaskCompletionSource<long>> _drained = new();

    private TaskCompletionSource<long> DrainedOf(string key) =>
        _drained.GetOrAdd(key, _ => new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously));

    /// <inheritdoc/>
    public async Task<IAsyncEnumerable<int>> RangeLater(int start, int count)
    {
        await Task.Yield();
        return Range(start, count);
    }

    /// <inheritdoc/>
    public LabelledItems Labelled(string label, int count) => new() { Label = label, Items = Range(0, count) };

    /// <inheritdoc/>
    public void Drain(string key, IAsyncEnumerable<int> values)
    {
        TaskCompletionSource<long> drained = DrainedOf(key);
        _ = Task.Run(async () =>
        {
            try
            {
                drained.TrySetResult(await Sum(values).ConfigureAwait(false));
            }
            catch (Exception e)
            {
                drained.TrySetException(e);
            }
        });
    }

    /// <inheritdoc/>
    public Task<long> Drained(string key) => DrainedOf(key).Task;
}
