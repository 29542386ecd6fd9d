using System.Diagnostics;
using System.Reflection;
using XCall.Domain;
using XCall.Tests.Contracts;

namespace XCall.Tests;

/// <summary>The one entry point across transports, concurrency, and dead peers, with real processes.</summary>
public sealed class RemoteTests
{
    [Fact]
    public void Local_tcp_address_prefers_shared_memory_when_the_name_is_served()
    {
        using HostProcess host = HostProcess.Start($"tcp://127.0.0.1:0/{HostProcess.UniqueName("both")}");
        using RemoteService<IShapes> preferred = Remote.Open<IShapes>(host.Address);
        Assert.Equal("shm", preferred.Transport);
        Assert.Equal(7, preferred.Proxy.Add(3, 4));
        using RemoteService<IShapes> tcp = Remote.Open<IShapes>(host.Address, new RemoteOptions { PreferSharedMemory = false });
        Assert.Equal("tcp", tcp.Transport);
        Assert.Equal(9, tcp.Proxy.Add(4, 5));
    }

    [Fact]
    public async Task Opening_a_service_whose_peer_never_answers_fails_within_the_connect_timeout()
    {
        // A TCP listener that completes the transport handshake but never takes the connection: nobody reads
        // the Hello. The default CallTimeout is infinite: only the ConnectTimeout can end Remote.Open.
        using XCall.Transport.Tcp.TcpChannelListener listener = XCall.Transport.Tcp.TcpTransport.Listen(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
        var options = new RemoteOptions { PreferSharedMemory = false, Reconnect = false, Tcp = new XCall.Transport.Tcp.TcpOptions { ConnectTimeout = TimeSpan.FromSeconds(2) } };
        var clock = Stopwatch.StartNew();
        Task<RemoteService<IShapes>> open = Task.Run(() => Remote.Open<IShapes>($"tcp://127.0.0.1:{listener.LocalEndpoint.Port}/silent", options));
        await Assert.ThrowsAsync<XCallTimeoutException>(() => open.WaitAsync(TimeSpan.FromSeconds(60)));
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), $"ConnectTimeout 2 s: opening took {clock.Elapsed}");
    }

    [Fact]
    public async Task Opening_a_service_is_cancelled_while_the_peer_has_not_answered_its_hello()
    {
        // The same silent listener, and a connect timeout far beyond the test: only the token ends the opening.
        // The Hello is awaited, so the token reaches it (and no thread is held while the peer stays silent).
        using XCall.Transport.Tcp.TcpChannelListener listener = XCall.Transport.Tcp.TcpTransport.Listen(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
        var options = new RemoteOptions { PreferSharedMemory = false, Reconnect = false, Tcp = new XCall.Transport.Tcp.TcpOptions { ConnectTimeout = TimeSpan.FromMinutes(10) } };
        using var cancel = new CancellationTokenSource();
        Task<RemoteService<IShapes>> open = Remote.OpenAsync<IShapes>($"tcp://127.0.0.1:{listener.LocalEndpoint.Port}/silent", options, cancel.Token);
        using (await listener.AcceptAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(60)))
        {
            Assert.False(open.IsCompleted);
            cancel.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => open.WaitAsync(TimeSpan.FromSeconds(60)));
        }
    }

    [Fact]
    public void Domain_address_reaches_a_loaded_host()
    {
        string path = typeof(RemoteTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "DomainServicePath").Value!;
        string name = HostProcess.UniqueName("dom");
        using DomainHost host = DomainHost.Load(path, name);
        using RemoteService<IShapes> shapes = Remote.Open<IShapes>($"domain://{name}");
        Assert.Equal("domain", shapes.Transport);
        Assert.Equal(3, shapes.Proxy.Add(1, 2));
        Assert.Throws<XCallDisconnectedException>(() => Remote.Open<IShapes>("domain://nobody-" + name));
    }

    [Fact]
    public void Opening_a_name_nobody_serves_fails_clearly()
    {
        var ex = Assert.ThrowsAny<XCallException>(() => Remote.Open<IShapes>($"shm://{HostProcess.UniqueName("nobody")}"));
        Assert.Contains("shm://", ex.Message);
    }

    [Theory]
    [InlineData("shm", 16, 100_000)]
    [InlineData("tcp", 64, 10_000)]
    public void Many_threads_share_one_connection_and_every_result_is_right(string transport, int threads, int calls)
    {
        string address = transport == "shm" ? $"shm://{HostProcess.UniqueName("conc")}" : $"tcp://127.0.0.1:0/{HostProcess.UniqueName("conc")}";
        using HostProcess host = HostProcess.Start(address, "--no-shm");
        using RemoteService<IShapes> service = Remote.Open<IShapes>(host.Address);
        Assert.Equal(transport, service.Transport);
        IShapes shapes = service.Proxy;
        long wrong = 0, done = 0;
        var workers = Enumerable.Range(0, threads).Select(t => new Thread(() =>
        {
            for (int i = 0; i < calls; i++)
            {
                if (shapes.Add(t * 1_000_000, i) != t * 1_000_000 + i)
                {
                    Interlocked.Increment(ref wrong);
                }
                Interlocked.Increment(ref done);
            }
        })).ToList();
        workers.ForEach(w => w.Start());
        workers.ForEach(w => w.Join());
        Assert.Equal(0, wrong);
        Assert.Equal((long)threads * calls, done);
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task Calls_fail_fast_when_the_server_process_is_killed(string transport)
    {
        string address = transport == "shm" ? $"shm://{HostProcess.UniqueName("kill")}" : $"tcp://127.0.0.1:0/{HostProcess.UniqueName("kill")}";
        HostProcess host = HostProcess.Start(address, "--no-shm");
        using RemoteService<IShapes> service = Remote.Open<IShapes>(host.Address);
        using RemoteService<IProbe> probe = Remote.Open<IProbe>(host.Address);
        Task pending = service.Proxy.DelayAsync(600_000, CancellationToken.None);
        using var started = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        Assert.Equal(nameof(IShapes.DelayAsync), await probe.Proxy.NextStartedAsync(started.Token));

        var clock = Stopwatch.StartNew();
        host.Kill();
        var ex = await Assert.ThrowsAsync<XCallDisconnectedException>(() => pending);
        clock.Stop();
        Assert.Contains(transport + "://", ex.Endpoint);
        // Generous bound: the tight figure is measured and reported separately.
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(10), $"took {clock.Elapsed}");
        Assert.Throws<XCallDisconnectedException>(() => service.Proxy.Add(1, 2));
        host.Dispose();
    }

    [Fact]
    public void Restarted_server_accepts_a_new_connection()
    {
        string address = $"shm://{HostProcess.UniqueName("restart")}";
        HostProcess first = HostProcess.Start(address);
        using (RemoteService<IShapes> s = Remote.Open<IShapes>(address))
        {
            Assert.Equal(2, s.Proxy.Add(1, 1));
        }
        first.Kill();
        first.Dispose();
        using HostProcess second = HostProcess.Start(address);
        using RemoteService<IShapes> again = Remote.Open<IShapes>(address);
        Assert.Equal(4, again.Proxy.Add(2, 2));
    }
}
