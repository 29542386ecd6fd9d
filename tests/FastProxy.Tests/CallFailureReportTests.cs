using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>What a failed call tells its caller: the token of a cancellation, the method that timed out.</summary>
public sealed class CallFailureReportTests
{
    [Fact]
    public async Task A_call_whose_token_was_cancelled_before_it_was_sent_reports_that_token_sync_and_async()
    {
        (XCallConnection client, XCallConnection server) = Connect(new ConnectionOptions());
        using (client)
        using (server)
        {
            IShapes shapes = client.GetProxy<IShapes>();
            using var cts = new CancellationTokenSource();
            cts.Cancel();

            var sync = Assert.ThrowsAny<OperationCanceledException>(() => shapes.WaitForCancel(cts.Token));
            var async = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => shapes.DelayAsync(60_000, cts.Token));

            Assert.Equal(cts.Token, sync.CancellationToken);
            Assert.Equal(cts.Token, async.CancellationToken);
            Assert.Equal(3, shapes.Add(1, 2)); // nothing of the dropped frames reached the server
        }
    }

    [Fact]
    public async Task A_timeout_names_the_contract_and_method()
    {
        (XCallConnection client, XCallConnection server) = Connect(new ConnectionOptions { CallTimeout = TimeSpan.FromMilliseconds(300) });
        using (client)
        using (server)
        {
            IShapes shapes = client.GetProxy<IShapes>();

            var sync = Assert.Throws<XCallTimeoutException>(() => shapes.WaitForCancel(CancellationToken.None));
            var async = await Assert.ThrowsAsync<XCallTimeoutException>(() => shapes.DelayAsync(60_000, CancellationToken.None));

            Assert.Contains($"{typeof(IShapes).FullName}.{nameof(IShapes.WaitForCancel)}", sync.Message);
            Assert.Contains($"{typeof(IShapes).FullName}.{nameof(IShapes.DelayAsync)}", async.Message);
        }
    }

    [Fact]
    public void A_user_marshaller_reading_a_reply_finds_the_connection_as_the_readers_context()
    {
        (XCallConnection client, XCallConnection server) = Connect(new ConnectionOptions());
        using (client)
        using (server)
        {
            Uri resolved = client.GetProxy<IShapes>().Resolve(new Uri("http://example.org/a/"), "b");
            Assert.Equal("http://example.org/a/b", resolved.ToString());
            Assert.Equal(typeof(XCallConnection), UriMarshaller.LastReadContext); // the reply, read on this thread
        }
    }

    private static (XCallConnection Client, XCallConnection Server) Connect(ConnectionOptions clientOptions)
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair("reports");
        var server = new XCallConnection(serverChannel);
        server.ExposeRoot(new Shapes(), ContractRegistry.Get<IShapes>().Dispatcher);
        server.Start();
        var client = new XCallConnection(clientChannel, clientOptions);
        client.Start();
        return (client, server);
    }
}
