using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>A span argument the method can hand back (through its result or an out / ref span) is read into
/// an array, not in place: such contracts compile, and what comes back is the argument's values.</summary>
public sealed class SpanEscapeTests : IDisposable
{
    private readonly XCallConnection _client;
    private readonly XCallConnection _server;
    private readonly SpanEscape _target = new();

    public SpanEscapeTests()
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        _server = new XCallConnection(serverChannel, new ConnectionOptions { DispatchMode = DispatchMode.Inline });
        _server.ExposeRoot(_target, ContractRegistry.Get<ISpanEscape>().Dispatcher);
        _server.Start();
        _client = new XCallConnection(clientChannel);
        _client.Start();
    }

    [Fact]
    public void A_span_returned_or_passed_out_carries_the_arguments_values()
    {
        ISpanEscape proxy = _client.GetProxy<ISpanEscape>();
        int[] first = [1, 2, 3];
        int[] second = [.. Enumerable.Range(0, 5000)];

        Assert.Equal(second, proxy.Second(first, second).ToArray());
        proxy.Copy(second, out ReadOnlySpan<int> copied);
        Assert.Equal(second, copied.ToArray());
        ReadOnlySpan<int> swapped = first;
        proxy.Swap(second, ref swapped);
        Assert.Equal(second, swapped.ToArray());
    }

    [Fact]
    public void An_in_span_is_read_in_place_unless_it_can_be_handed_back()
    {
        ISpanEscape proxy = _client.GetProxy<ISpanEscape>();
        int[] values = [.. Enumerable.Range(1, 100_000)];
        long expected = values.Sum(v => (long)v);

        for (int i = 0; i < 4; i++)
        {
            Assert.Equal(expected, proxy.SumIn(values));
        }
        Assert.Equal(values, proxy.EchoIn(values).ToArray());

        // The server's receive thread runs each call (inline dispatch): between two entries it allocated the
        // reply and bookkeeping, far less than the 400 KB an array of the argument would take.
        SpanEscape target = _target;
        Assert.Single(target.Threads.Distinct());
        for (int i = 1; i < target.AllocatedAtEntry.Count; i++)
        {
            long between = target.AllocatedAtEntry[i] - target.AllocatedAtEntry[i - 1];
            Assert.True(between < 100_000, $"{between} bytes allocated between SumIn calls {i - 1} and {i}: the span was copied");
        }
    }

    [Fact]
    public void A_span_copied_to_a_rented_array_goes_back_to_the_pool_when_the_target_throws()
    {
        ISpanEscape proxy = _client.GetProxy<ISpanEscape>();
        long[] values = [.. Enumerable.Range(1, 100_000).Select(v => (long)v)];

        // The first call allocates what is set up once (buffers a pool hands out for the first time, the runtime's
        // first exception and stack trace), more or less depending on what other tests ran before: one call first, not
        // counted, so only what each call leaves behind is compared.
        Assert.Throws<RemoteInvocationException>(() => proxy.Refuse(new byte[1], values));

        // Some padding lengths put the 8-byte values off their alignment, which makes the dispatcher copy them
        // to an array from the pool (800 KB); the others are read in place.
        for (int pad = 0; pad < 8; pad++)
        {
            _target.AllocatedAtEntry.Clear();
            for (int i = 0; i < 4; i++)
            {
                var error = Assert.Throws<RemoteInvocationException>(() => proxy.Refuse(new byte[pad], values));
                Assert.Contains("refused 100000 values", error.Message);
            }
            for (int i = 1; i < _target.AllocatedAtEntry.Count; i++)
            {
                long between = _target.AllocatedAtEntry[i] - _target.AllocatedAtEntry[i - 1];
                Assert.True(between < 100_000, $"{between} bytes allocated between Refuse calls {i - 1} and {i} (pad {pad}): the copy was not returned to the pool");
            }
        }
    }

    public void Dispose()
    {
        _client.Dispose();
        _server.Dispose();
    }
}

[Remotable]
public interface ISpanEscape
{
    ReadOnlySpan<int> Second(ReadOnlySpan<int> a, ReadOnlySpan<int> b);

    void Copy(ReadOnlySpan<int> a, out ReadOnlySpan<int> b);

    void Swap(ReadOnlySpan<int> a, ref ReadOnlySpan<int> b);

    long SumIn(in ReadOnlySpan<int> values);

    ReadOnlySpan<int> EchoIn(in ReadOnlySpan<int> values);

    void Refuse(ReadOnlySpan<byte> pad, ReadOnlySpan<long> values);
}

public sealed class SpanEscape : ISpanEscape
{
    public ReadOnlySpan<int> Second(ReadOnlySpan<int> a, ReadOnlySpan<int> b) => b;

    public void Copy(ReadOnlySpan<int> a, out ReadOnlySpan<int> b) => b = a;

    public void Swap(ReadOnlySpan<int> a, ref ReadOnlySpan<int> b) => b = a;

    /// <summary>The thread of each <see cref="SumIn"/> call, and what it had allocated at entry.</summary>
    public List<int> Threads { get; } = [];

    /// <inheritdoc cref="Threads"/>
    public List<long> AllocatedAtEntry { get; } = [];

    public long SumIn(in ReadOnlySpan<int> values)
    {
        AllocatedAtEntry.Add(GC.GetAllocatedBytesForCurrentThread());
        Threads.Add(Environment.CurrentManagedThreadId);
        long sum = 0;
        foreach (int v in values)
        {
            sum += v;
        }
        return sum;
    }

    public ReadOnlySpan<int> EchoIn(in ReadOnlySpan<int> values) => values;

    public void Refuse(ReadOnlySpan<byte> pad, ReadOnlySpan<long> values)
    {
        AllocatedAtEntry.Add(GC.GetAllocatedBytesForCurrentThread());
        throw new InvalidOperationException($"refused {values.Length} values");
    }
}
