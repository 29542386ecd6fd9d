using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>A span argument the method can hand back (through its result or an out / ref span) is read into
/// an array, not in place: such contracts compile, and what comes back is the argument's values.</summary>
public sealed class SpanEscapeTests : IDisposable
{
    private readonly XCallConnection _client;
    private readonly XCallConnection _server;

    public SpanEscapeTests()
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        _server = new XCallConnection(serverChannel, new ConnectionOptions { DispatchMode = DispatchMode.Inline });
        _server.ExposeRoot(new SpanEscape(), ContractRegistry.Get<ISpanEscape>().Dispatcher);
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
}

public sealed class SpanEscape : ISpanEscape
{
    public ReadOnlySpan<int> Second(ReadOnlySpan<int> a, ReadOnlySpan<int> b) => b;

    public void Copy(ReadOnlySpan<int> a, out ReadOnlySpan<int> b) => b = a;

    public void Swap(ReadOnlySpan<int> a, ref ReadOnlySpan<int> b) => b = a;
}
