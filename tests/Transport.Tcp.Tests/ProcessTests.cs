using System.Diagnostics;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

/// <summary>The server is a real process (tests/Transport.Tcp.TestHost) that gets stopped or killed.</summary>
public sealed class ProcessTests(ITestOutputHelper output)
{
    private static readonly TcpOptions Short = new()
    {
        HeartbeatInterval = TimeSpan.FromMilliseconds(100),
        HeartbeatTimeout = TimeSpan.FromMilliseconds(500),
    };

    [Fact]
    public async Task Echo_works_with_a_server_in_another_process()
    {
        using TestHostProcess server = TestHostProcess.Start("server 127.0.0.1 0");
        int port = await server.WaitForReadyAsync();
        using TestHostProcess client = TestHostProcess.Start($"client 127.0.0.1 {port} 200 5000");
        string ok = await client.WaitForLineAsync("OK ");
        Assert.Equal($"OK 200 tcp://127.0.0.1:{port}", ok);
        Assert.Equal(0, await client.WaitForExitAsync());
    }

    [Fact]
    public async Task Killing_the_server_process_closes_the_client_channel_promptly()
    {
        // No heartbeat timeout: the kernel's reset or end of stream alone must tell the client.
        var options = new TcpOptions { HeartbeatTimeout = Timeout.InfiniteTimeSpan };
        using TestHostProcess server = TestHostProcess.Start("server 127.0.0.1 0");
        int port = await server.WaitForReadyAsync();
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", port, options);
        var replies = new ReplyCollector();
        channel.Start(replies);
        Assert.Equal([1, 2, 3], await Frames.CallAsync(channel, replies, 1, [1, 2, 3]));
        Task<byte[]> pending = replies.Reply(2);

        var clock = Stopwatch.StartNew();
        server.Signal(TestHostProcess.SigKill);
        Exception? error = await replies.Closed.WaitAsync(Timeouts.Long);
        clock.Stop();

        Assert.IsType<XCallDisconnectedException>(error);
        await Assert.ThrowsAsync<XCallDisconnectedException>(() => pending);
        output.WriteLine($"kill -9 of the server noticed after {clock.Elapsed.TotalMilliseconds:0.0} ms: {error!.Message}");
    }

    [Fact]
    public async Task Stopped_server_process_is_declared_dead_by_the_heartbeat()
    {
        using TestHostProcess server = TestHostProcess.Start("server 127.0.0.1 0 --heartbeat 100 --timeout 500");
        int port = await server.WaitForReadyAsync();
        using FrameChannel channel = await TcpTransport.ConnectAsync("127.0.0.1", port, Short);
        var replies = new ReplyCollector();
        channel.Start(replies);
        Assert.Equal([9], await Frames.CallAsync(channel, replies, 1, [9]));

        var clock = Stopwatch.StartNew();
        server.Signal(TestHostProcess.SigStop); // alive to the kernel, silent to us
        try
        {
            Exception? error = await replies.Closed.WaitAsync(Short.HeartbeatTimeout * 10);
            clock.Stop();
            var disconnected = Assert.IsType<XCallDisconnectedException>(error);
            Assert.Contains("no heartbeat", disconnected.Message);
            output.WriteLine($"SIGSTOPped server declared dead after {clock.ElapsedMilliseconds} ms (timeout 500 ms)");
        }
        finally
        {
            server.Signal(TestHostProcess.SigKill);
        }
    }
}
