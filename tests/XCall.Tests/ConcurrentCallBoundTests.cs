using System.Collections.Concurrent;
using System.Globalization;
using XCall.Tests.Contracts;

namespace XCall.Tests;

/// <summary>
/// <see cref="ConnectionOptions.MaxConcurrentCalls"/> over shared memory and TCP: a refusal crosses the wire as the
/// runtime's own (the caller gets <see cref="XCallServerBusyException"/>), and one-way calls past the bound run
/// where they are received, so a server whose calls block stops reading and the transport holds the sender back.
/// A receiving thread that copied every call out and queued it would do neither: the server would queue without
/// limit and the sender never wait.
/// </summary>
public sealed class ConcurrentCallBoundTests
{
    // Failure bounds only: every wait below ends as soon as what it waits for happens.
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task A_call_past_the_bound_is_refused_over_the_wire_and_the_connection_goes_on(string transport)
    {
        var gated = new GatedShapes();
        using var served = new Served(transport, gated, new ConnectionOptions { MaxConcurrentCalls = 4 }, new ConnectionOptions());
        IShapes proxy = served.Service.Proxy;
        Task<int>[] held = [.. Enumerable.Range(0, 4).Select(_ => Task.Factory.StartNew(() => proxy.WaitForCancel(CancellationToken.None), TaskCreationOptions.LongRunning))];
        await gated.WaitEnteredAsync(4);

        var refused = Assert.Throws<XCallServerBusyException>(() => proxy.Add(1, 2));
        Assert.StartsWith(transport + "://", refused.Endpoint);
        Assert.Contains("IShapes.Add", refused.Message);
        Assert.Contains("MaxConcurrentCalls = 4", refused.Reason);
        await Assert.ThrowsAsync<XCallServerBusyException>(() => proxy.AddAsync(1, 2));
        Assert.Equal(0, gated.Adds);

        gated.Open();
        Assert.Equal(new[] { 42, 42, 42, 42 }, await Task.WhenAll(held).WaitAsync(Bound));
        Assert.Equal(3, proxy.Add(1, 2));
        Assert.Equal(5, await proxy.AddAsync(2, 3));
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task A_flood_of_one_way_calls_to_a_blocked_server_holds_the_sender_back_and_none_is_lost(string transport)
    {
        var gated = new GatedShapes();
        // The call timeout bounds the sending of a one-way frame too: the sender held back fails with it.
        using var served = new Served(transport, gated, new ConnectionOptions { MaxConcurrentCalls = 4 }, new ConnectionOptions { CallTimeout = TimeSpan.FromSeconds(2) });
        IShapes proxy = served.Service.Proxy;
        string padding = new('x', 1000);
        const int Cap = 100_000; // 100 MB: far more than the ring (1 MiB) or the sockets' buffers take
        int sent = await Task.Factory.StartNew(() =>
        {
            for (int i = 0; i < Cap; i++)
            {
                try
                {
                    proxy.Post(string.Create(CultureInfo.InvariantCulture, $"{i} {padding}"));
                }
                catch (XCallTimeoutException)
                {
                    return i;
                }
            }
            return Cap;
        }, TaskCreationOptions.LongRunning).WaitAsync(Bound);
        Assert.True(sent < Cap, $"{Cap} one-way calls of 1 KB went to a server whose calls all block, and the sender never waited");

        // Four wait at the gate (on receive threads that handed the receiving over, or on the pool), the fifth on the
        // receiving thread, which reads nothing more.
        await gated.WaitEnteredAsync(5);
        Assert.Equal(5, gated.EnteredCount);

        gated.Open();
        for (int i = 0; i < sent; i++)
        {
            Assert.True(await gated.Received.WaitAsync(Bound), $"{i} of {sent} one-way calls ran");
        }
        // The frame that timed out was dropped whole (shm: it never entered the ring) or cut off on the wire, which
        // closed the link (tcp: the socket still delivered every byte before it); every call before it ran once.
        Assert.Equal(Enumerable.Range(0, sent), gated.Messages.Select(m => int.Parse(m[..m.IndexOf(' ')], CultureInfo.InvariantCulture)).Order());
        Assert.Equal(3, proxy.Add(1, 2)); // over tcp on a new link: the service reconnects
    }

    /// <summary>A server of <see cref="GatedShapes"/> in this process at a fresh address, and a service opened to it.</summary>
    private sealed class Served : IDisposable
    {
        private readonly GatedShapes _gated;
        private readonly XCallServer _server;
        private readonly RemoteListener _listener;

        public Served(string transport, GatedShapes gated, ConnectionOptions server, ConnectionOptions client)
        {
            _gated = gated;
            _server = new XCallServer(server).Add<IShapes>(gated);
            string name = HostProcess.UniqueName("bound");
            string address = transport == "shm" ? $"shm://{name}" : $"tcp://127.0.0.1:0/{name}";
            _listener = Remote.Serve(address, _server, new RemoteOptions { ServeSharedMemoryToo = false });
            string open = transport == "shm" ? address : _listener.TcpAddress!.ToString()!;
            Service = Remote.Open<IShapes>(open, new RemoteOptions { PreferSharedMemory = false, Connection = client });
        }

        public RemoteService<IShapes> Service { get; }

        public void Dispose()
        {
            _gated.Open(); // nothing stays blocked behind a failed test
            Service.Dispose();
            _listener.Dispose();
            _server.Dispose();
        }
    }

    /// <summary>IShapes whose WaitForCancel and Post wait at a gate the test opens, and whose Add counts its runs.</summary>
    private sealed class GatedShapes : Shapes, IShapes
    {
        private readonly ManualResetEventSlim _gate = new(false);
        private readonly SemaphoreSlim _entered = new(0);
        private int _enteredCount;
        private int _adds;

        public int EnteredCount => Volatile.Read(ref _enteredCount);

        public int Adds => Volatile.Read(ref _adds);

        public ConcurrentQueue<string> Messages { get; } = new();

        public SemaphoreSlim Received { get; } = new(0);

        public void Open() => _gate.Set();

        public async Task WaitEnteredAsync(int count)
        {
            for (int i = 0; i < count; i++)
            {
                Assert.True(await _entered.WaitAsync(Bound), $"{i} of {count} calls entered");
            }
        }

        int IShapes.WaitForCancel(CancellationToken cancellationToken)
        {
            WaitAtGate();
            return 42;
        }

        void IShapes.Post(string message)
        {
            WaitAtGate();
            Messages.Enqueue(message);
            Received.Release();
        }

        int IShapes.Add(int a, int b)
        {
            Interlocked.Increment(ref _adds);
            return a + b;
        }

        private void WaitAtGate()
        {
            Interlocked.Increment(ref _enteredCount);
            _entered.Release();
            if (!_gate.Wait(Bound))
            {
                throw new TimeoutException("the test never opened the gate");
            }
        }
    }
}
