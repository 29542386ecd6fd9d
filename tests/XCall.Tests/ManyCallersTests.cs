using XCall.Tests.Contracts;

namespace XCall.Tests;

/// <summary>
/// Many callers against one server with the default settings, over shared memory and TCP: 16 threads sharing one
/// connection, and 16 connections of one thread each, every call answered with its own result. With more callers
/// than cores, the waits back off from spinning to sleeping (shm: the adaptive idle strategy), so a wake-up lost
/// on the way shows up here as a wrong or missing result, or as a call that never returns (the bound). The callers
/// that do not poll the ring themselves sleep on their call's own word (a futex) until the thread that reads their
/// reply wakes them: the last test runs that against a server in another process.
/// </summary>
public sealed class ManyCallersTests
{
    private const int Callers = 16;
    private const int CallsEach = 1500;

    // A failure bound only: the calls end as soon as they are answered.
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(120);

    [Theory]
    [InlineData("shm", true)]
    [InlineData("tcp", true)]
    [InlineData("shm", false)]
    [InlineData("tcp", false)]
    public async Task Sixteen_callers_get_every_reply_from_a_server_with_default_settings(string transport, bool sharedConnection)
    {
        using var server = new XCallServer().Add<IShapes>(new Shapes());
        string name = HostProcess.UniqueName("many");
        using RemoteListener listener = Remote.Serve($"tcp://127.0.0.1:0/{name}", server);
        string address = transport == "shm" ? $"shm://{name}" : listener.TcpAddress!.ToString()!;
        var options = new RemoteOptions { PreferSharedMemory = transport == "shm" };
        RemoteService<IShapes>[] services = [.. Enumerable.Range(0, sharedConnection ? 1 : Callers).Select(_ => Remote.Open<IShapes>(address, options))];
        try
        {
            Assert.All(services, s => Assert.Equal(transport, s.Transport));
            await CallFromEveryThread(t => services[sharedConnection ? 0 : t].Proxy);
        }
        finally
        {
            foreach (RemoteService<IShapes> service in services)
            {
                service.Dispose();
            }
        }
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task Sixteen_threads_on_one_connection_to_a_server_process_get_every_reply(string transport)
    {
        string name = HostProcess.UniqueName("many-proc");
        using HostProcess host = HostProcess.Start($"tcp://127.0.0.1:0/{name}");
        string address = transport == "shm" ? $"shm://{name}" : host.Address;
        using RemoteService<IShapes> service = Remote.Open<IShapes>(address, new RemoteOptions { PreferSharedMemory = transport == "shm" });
        Assert.Equal(transport, service.Transport);
        await CallFromEveryThread(_ => service.Proxy);
        Assert.False(host.HasExited);
    }

    /// <summary>Each of <see cref="Callers"/> threads makes <see cref="CallsEach"/> calls through its proxy, each checked.</summary>
    private static async Task CallFromEveryThread(Func<int, IShapes> proxyOf)
    {
        int[] answered = await Task.WhenAll(Enumerable.Range(0, Callers).Select(t => Task.Factory.StartNew(() =>
        {
            IShapes proxy = proxyOf(t);
            int answered = 0;
            for (int i = 0; i < CallsEach; i++)
            {
                Assert.Equal(i + (t * 100_000), proxy.Add(i, t * 100_000));
                answered++;
            }
            return answered;
        }, TaskCreationOptions.LongRunning))).WaitAsync(Bound);
        Assert.All(answered, n => Assert.Equal(CallsEach, n));
    }
}
