using System.Net.Sockets;
using System.Net;
using XCall.Runtime.CompilerServices;
using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.Tests;

/// <summary>A service whose server dies and comes back: calls fail clearly, then reconnect, and the state changes are observable.</summary>
public sealed class ReconnectTests
{
    internal static readonly RemoteOptions s_options = new() { ReconnectBackoff = TimeSpan.FromMilliseconds(20), MaxReconnectBackoff = TimeSpan.FromMilliseconds(200) };

    // A failure bound only: what it guards takes microseconds to milliseconds.
    internal static readonly TimeSpan s_bound = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task Next_call_reconnects_after_the_server_restarts(string transport)
    {
        (string address, HostProcess first) = StartFirst(transport, "recon");
        using RemoteService<IShapes> service = Remote.Open<IShapes>(address, s_options);
        var states = new List<ConnectionState>();
        var lost = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        service.StateChanged += (_, state, error) =>
        {
            lock (states)
            {
                states.Add(state);
            }
            if (state == ConnectionState.Disconnected)
            {
                lost.TrySetResult(error);
            }
        };
        Assert.Equal(2, service.Proxy.Add(1, 1));

        first.Kill();
        first.Dispose();
        await lost.Task.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(ConnectionState.Disconnected, service.State);
        var down = Assert.Throws<XCallDisconnectedException>(() => service.Proxy.Add(1, 2));
        Assert.Contains(transport + "://", down.Endpoint);
        Assert.Single(System.Text.RegularExpressions.Regex.Matches(down.Message, "lost:")); // a failed reconnect names the endpoint once

        using HostProcess second = HostProcess.Start(address, "--no-shm");
        int result = RetryUntilConnected(() => service.Proxy.Add(2, 3));
        Assert.Equal(5, result);
        Assert.Equal(ConnectionState.Connected, service.State);
        lock (states)
        {
            Assert.Equal([ConnectionState.Disconnected, ConnectionState.Connected], states.Distinct());
        }
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task References_of_a_lost_link_fail_clearly_and_never_reach_the_next_servers_objects(string transport)
    {
        (string address, HostProcess first) = StartFirst(transport, "reconref");
        using RemoteService<ICallbacks> service = Remote.Open<ICallbacks>(address, s_options);
        XCallConnection connection = service.Connection!;
        // LinkLost is raised once the connection has handled the loss (StateChanged comes before that).
        var lost = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        connection.LinkLost += (_, _) => lost.TrySetResult();
        ICounter old = service.Proxy.CreateCounter(100);
        Assert.Equal(101, old.Next());
        Assert.False(service.Proxy.Hold(new Doubler()));
        Assert.Equal(1, connection.ImportedReferenceCount);
        Assert.Equal(1, connection.ExposedObjectCount);

        first.Kill();
        first.Dispose();
        await lost.Task.WaitAsync(TimeSpan.FromSeconds(30));
        // What this side exposed to the dead link, and what it held of it, is gone with it.
        Assert.Equal(0, connection.ExposedObjectCount);
        Assert.Equal(0, connection.ImportedReferenceCount);

        using HostProcess second = HostProcess.Start(address, "--no-shm");
        ICounter fresh = RetryUntilConnected(() => service.Proxy.CreateCounter(500));
        // The new server numbers its objects as the first did: the old proxy's id now names the new counter.
        Assert.Equal(((ProxyBase)(object)old).ObjectId, ((ProxyBase)(object)fresh).ObjectId);

        var stale = Assert.Throws<XCallDisconnectedException>(() => old.Next());
        Assert.Contains("reconnect", stale.Message);
        await Assert.ThrowsAsync<XCallDisconnectedException>(() => old.NextAsync());
        Assert.Throws<XCallDisconnectedException>(() => old.Advance(1000)); // one-way: refused before it is sent
        ((IDisposable)old).Dispose(); // must not release the new counter that has its id
        Assert.Equal(501, fresh.Next());
        Assert.Equal(502, await fresh.NextAsync());
        Assert.Equal(1, connection.ImportedReferenceCount);
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task The_call_timeout_bounds_a_reconnect_to_a_server_that_does_not_answer(string transport)
    {
        TimeSpan connectTimeout = TimeSpan.FromSeconds(20);
        using Stalled stalled = await Stalled.Start(transport, "stalled", s_options with
        {
            Connection = new ConnectionOptions { CallTimeout = TimeSpan.FromSeconds(1) },
            Shm = s_options.Shm with { ConnectTimeout = connectTimeout },
            Tcp = s_options.Tcp with { ConnectTimeout = connectTimeout },
        });
        RemoteService<IShapes> service = stalled.Service;
        // The reconnect inside the call must not wait out the whole ConnectTimeout (20 s here, 5 s by default).
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            try
            {
                service.Proxy.Add(1, 2);
                Assert.Fail("a stopped server answered");
            }
            catch (XCallDisconnectedException) when (clock.Elapsed < TimeSpan.FromSeconds(30))
            {
                // the backoff after the loss: the next attempt is the one this test is about
            }
            catch (XCallTimeoutException)
            {
                break;
            }
        }
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(15), $"CallTimeout 1 s, ConnectTimeout 20 s: the call took {clock.Elapsed}");
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task An_async_call_does_not_wait_for_its_reconnect_and_its_token_ends_the_wait(string transport)
    {
        // A connect timeout far beyond every bound below: a call that waited for the connect cannot pass them.
        using Stalled stalled = await Stalled.Start(transport, "asyncrecon", s_options with
        {
            Shm = s_options.Shm with { ConnectTimeout = TimeSpan.FromMinutes(5) },
            Tcp = s_options.Tcp with { ConnectTimeout = TimeSpan.FromMinutes(5) },
        });
        IShapes proxy = stalled.Service.Proxy;
        using var cts = new CancellationTokenSource();

        Task cancelled = await Returned(() => proxy.DelayAsync(0, cts.Token));
        Assert.False(cancelled.IsCompleted); // the reconnect waits for a server that does not run
        Task<int> shared = proxy.AddAsync(2, 3); // joins the attempt under way
        Assert.False(shared.IsCompleted);

        cts.Cancel();
        var ended = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled.WaitAsync(s_bound));
        Assert.Equal(cts.Token, ended.CancellationToken);
        Assert.False(shared.IsCompleted); // the attempt goes on for the caller still waiting

        stalled.Resume();
        Assert.Equal(5, await shared.WaitAsync(s_bound));
        Assert.Equal(7, await proxy.AddAsync(3, 4));
        Assert.Equal(ConnectionState.Connected, stalled.Service.State);
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task The_call_timeout_ends_an_async_calls_wait_for_its_reconnect(string transport)
    {
        using Stalled stalled = await Stalled.Start(transport, "asynctimeout", s_options with
        {
            Connection = new ConnectionOptions { CallTimeout = TimeSpan.FromSeconds(1) },
            Shm = s_options.Shm with { ConnectTimeout = TimeSpan.FromMinutes(5) },
            Tcp = s_options.Tcp with { ConnectTimeout = TimeSpan.FromMinutes(5) },
        });

        Task<int> call = await Returned(() => stalled.Service.Proxy.AddAsync(1, 2));
        var timedOut = await Assert.ThrowsAsync<XCallTimeoutException>(() => call.WaitAsync(s_bound));
        Assert.Contains("reconnect", timedOut.Message);

        stalled.Resume(); // the attempt the call gave up on still brings the link back
        Assert.Equal(5, await RetryUntilConnectedAsync(() => stalled.Service.Proxy.AddAsync(2, 3)));
    }

    [Theory]
    [InlineData("shm", false)]
    [InlineData("shm", true)]
    [InlineData("tcp", false)]
    [InlineData("tcp", true)]
    public async Task The_call_timeout_bounds_a_calls_reconnect_and_its_reply_together(string transport, bool isAsync)
    {
        TimeSpan callTimeout = TimeSpan.FromSeconds(4);
        using Stalled stalled = await Stalled.Start(transport, "whole", s_options with
        {
            Connection = new ConnectionOptions { CallTimeout = callTimeout },
            Shm = s_options.Shm with { ConnectTimeout = TimeSpan.FromMinutes(5) },
            Tcp = s_options.Tcp with { ConnectTimeout = TimeSpan.FromMinutes(5) },
        });
        IShapes proxy = stalled.Service.Proxy;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        TimeSpan began = TimeSpan.Zero;
        Task call = Task.Run(async () =>
        {
            while (true)
            {
                began = clock.Elapsed;
                try
                {
                    // Methods that answer only when cancelled: the reply never comes in time.
                    if (isAsync)
                    {
                        await proxy.DelayAsync(int.MaxValue, CancellationToken.None);
                    }
                    else
                    {
                        proxy.WaitForCancel(CancellationToken.None);
                    }
                    Assert.Fail("the call was answered");
                }
                catch (XCallDisconnectedException) when (clock.Elapsed < s_bound)
                {
                    // the backoff after the loss: the next attempt is the one this test is about
                }
            }
        });

        // The call waits for the reconnect (the new server is stopped) for 3 of its 4 s; then the link comes back, the
        // call goes out, and no reply comes. Its timeout counts from its beginning: about 4 s in all, not 3 + 4.
        Assert.NotSame(call, await Task.WhenAny(call, Task.Delay(TimeSpan.FromSeconds(3))));
        stalled.Resume();
        var timedOut = await Assert.ThrowsAsync<XCallTimeoutException>(() => call.WaitAsync(s_bound));
        TimeSpan took = clock.Elapsed - began;
        Assert.True(took < callTimeout + TimeSpan.FromSeconds(2), $"CallTimeout {callTimeout.TotalSeconds} s, the reconnect took 3 s of it: the call took {took} ({timedOut.Message})");
        Assert.True(took >= callTimeout - TimeSpan.FromMilliseconds(100), $"the call timed out early, after {took}");
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public void A_one_way_call_on_a_disposed_service_fails_as_every_other_call_does(string transport)
    {
        (string address, HostProcess host) = StartFirst(transport, "late");
        using (host)
        {
            RemoteService<IShapes> service = Remote.Open<IShapes>(address, s_options);
            Assert.Equal(3, service.Proxy.Add(1, 2));
            service.Dispose();
            Assert.Throws<XCallDisconnectedException>(() => service.Proxy.Add(1, 2));
            Assert.Throws<XCallDisconnectedException>(() => service.Proxy.Post("late")); // was ObjectDisposedException naming an internal type
        }
    }

    private static T RetryUntilConnected<T>(Func<T> call)
    {
        // The reconnect waits out its backoff; poll the call itself, bounded generously.
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (true)
        {
            try
            {
                return call();
            }
            catch (XCallDisconnectedException) when (DateTime.UtcNow < deadline)
            {
                Thread.Yield();
            }
        }
    }

    /// <summary>
    /// What <paramref name="call"/> returns, made on a pool thread: a call that blocked its caller (a reconnect on
    /// the caller's thread) fails the bound instead of hanging the test.
    /// </summary>
    internal static Task<T> Returned<T>(Func<T> call) =>
        Task.Factory.StartNew(call, CancellationToken.None, TaskCreationOptions.DenyChildAttach, TaskScheduler.Default).WaitAsync(s_bound);

    private static async Task<T> RetryUntilConnectedAsync<T>(Func<Task<T>> call)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (true)
        {
            try
            {
                return await call();
            }
            catch (Exception ex) when (ex is XCallDisconnectedException or XCallTimeoutException && DateTime.UtcNow < deadline)
            {
                // The backoff after a failed attempt, or a call that gave up while the attempt was finishing.
            }
        }
    }

    /// <summary>
    /// A service whose server was killed, with a second server at its address that is stopped (SIGSTOP): its
    /// socket takes a reconnect's connection and nobody answers the handshake until <see cref="Resume"/>.
    /// </summary>
    private sealed class Stalled : IDisposable
    {
        private readonly HostProcess _second;
        private bool _resumed;

        private Stalled(RemoteService<IShapes> service, HostProcess second)
        {
            Service = service;
            _second = second;
        }

        public RemoteService<IShapes> Service { get; }

        public static async Task<Stalled> Start(string transport, string prefix, RemoteOptions options)
        {
            (string address, HostProcess first) = StartFirst(transport, prefix);
            RemoteService<IShapes> service = Remote.Open<IShapes>(address, options);
            Assert.Equal(3, service.Proxy.Add(1, 2));
            var lost = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            service.StateChanged += (_, state, _) =>
            {
                if (state == ConnectionState.Disconnected)
                {
                    lost.TrySetResult();
                }
            };
            first.Kill();
            first.Dispose();
            await lost.Task.WaitAsync(s_bound);
            HostProcess second = HostProcess.Start(address, "--no-shm");
            second.Signal("STOP");
            return new Stalled(service, second);
        }

        public void Resume()
        {
            if (!_resumed)
            {
                _resumed = true;
                _second.Signal("CONT");
            }
        }

        public void Dispose()
        {
            Resume();
            Service.Dispose();
            _second.Dispose();
        }
    }

    private sealed class Doubler : ICallback
    {
        public int Report(int value) => value * 2;

        public int Nested(int depth) => depth;
    }

    /// <summary>A server process (no shm side door) at a fresh address of <paramref name="transport"/>.</summary>
    private static (string Address, HostProcess Host) StartFirst(string transport, string prefix)
    {
        string name = HostProcess.UniqueName(prefix);
        string address = transport == "shm" ? $"shm://{name}" : $"tcp://127.0.0.1:{FreePort()}/{name}";
        return (address, HostProcess.Start(address, "--no-shm"));
    }

    private static int FreePort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }
}
