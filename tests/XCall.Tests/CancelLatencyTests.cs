using XCall.Tests.Contracts;

namespace XCall.Tests;

/// <summary>
/// A sync call whose token is cancelled fails at once even when the server's method ignores the token and no
/// byte comes back: over TCP a caller that reads the socket itself must not block until the next byte arrives
/// (the next heartbeat, or never with heartbeats off).
/// </summary>
public sealed class CancelLatencyTests
{
    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task Cancelling_a_sync_call_returns_although_the_server_ignores_the_token_and_sends_nothing(string transport)
    {
        var tcp = new Transport.Tcp.TcpOptions { HeartbeatInterval = Timeout.InfiniteTimeSpan, HeartbeatTimeout = Timeout.InfiniteTimeSpan };
        var stubborn = new StubbornShapes();
        using var server = new XCallServer().Add<IShapes>(stubborn);
        string name = HostProcess.UniqueName("cancel");
        string address = transport == "shm" ? $"shm://{name}" : $"tcp://127.0.0.1:0/{name}";
        using RemoteListener listener = Remote.Serve(address, server, new RemoteOptions { ServeSharedMemoryToo = false, Tcp = tcp });
        string open = transport == "shm" ? address : listener.TcpAddress!.ToString()!;
        using RemoteService<IShapes> service = Remote.Open<IShapes>(open, new RemoteOptions { PreferSharedMemory = false, Tcp = tcp });
        try
        {
            for (int round = 0; round < 3; round++)
            {
                using var cts = new CancellationTokenSource();
                Task<int> call = Task.Factory.StartNew(() =>
                {
                    // Back-to-back sync calls first: over TCP this caller then reads the socket itself (leads).
                    for (int i = 0; i < 1000; i++)
                    {
                        service.Proxy.Add(i, 1);
                    }
                    return service.Proxy.WaitForCancel(cts.Token);
                }, TaskCreationOptions.LongRunning);
                Assert.True(await stubborn.Entered.WaitAsync(TimeSpan.FromSeconds(30)), "the method did not start");
                cts.Cancel();
                // Generous: a caller blocked on the socket would stay until the method returned (60 s).
                await Assert.ThrowsAnyAsync<OperationCanceledException>(() => call.WaitAsync(TimeSpan.FromSeconds(15)));
            }
        }
        finally
        {
            stubborn.Release.Set();
        }
    }

    /// <summary>IShapes whose WaitForCancel ignores its token (a method that does not cooperate) and sends nothing until released.</summary>
    private sealed class StubbornShapes : Shapes, IShapes
    {
        public SemaphoreSlim Entered { get; } = new(0);

        public ManualResetEventSlim Release { get; } = new(false);

        int IShapes.WaitForCancel(CancellationToken cancellationToken)
        {
            Entered.Release();
            Release.Wait(TimeSpan.FromSeconds(60));
            return 42;
        }
    }
}
