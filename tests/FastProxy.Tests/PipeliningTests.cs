using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>Which async calls count as pipelined (their frame may be batched, and the caller does not poll for the reply).</summary>
public sealed class PipeliningTests : IDisposable
{
    private readonly InMemoryChannel _clientChannel;
    private readonly XCallConnection _client;
    private readonly XCallConnection _server;
    private readonly IShapes _shapes;

    public PipeliningTests()
    {
        (_clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        _server = new XCallConnection(serverChannel);
        _server.ExposeRoot(new Shapes(), ContractRegistry.Get<IShapes>().Dispatcher);
        _server.Start();
        _client = new XCallConnection(_clientChannel);
        _client.Start();
        _shapes = _client.GetProxy<IShapes>();
    }

    [Fact]
    public async Task Awaited_calls_while_a_long_call_waits_are_not_pipelined()
    {
        using var cancel = new CancellationTokenSource();
        Task longCall = _shapes.DelayAsync(600_000, cancel.Token);

        // Made while the long call is still owed: pipelined behind it.
        Assert.Equal(3, await _shapes.AddAsync(1, 2));
        Assert.Equal(1, _clientChannel.BatchedCommits);

        // Each awaited before the next is made: alone, although the long call is still in flight.
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(i + 10, await _shapes.AddAsync(i, 10));
        }
        Assert.Equal(1, _clientChannel.BatchedCommits);
        Assert.False(longCall.IsCompleted);

        // A call made while the call before it is still owed is pipelined again.
        Task blocker = _shapes.DelayAsync(600_000, cancel.Token);
        Task<int> behindBlocker = _shapes.AddAsync(5, 5);
        Assert.Equal(10, await behindBlocker);
        Assert.Equal(2, _clientChannel.BatchedCommits);

        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => longCall);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => blocker);
    }

    public void Dispose()
    {
        _client.Dispose();
        _server.Dispose();
    }
}
