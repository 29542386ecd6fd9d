using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Transport;
using XCall.Transport.Shm;

namespace XCall.Tests;

/// <summary>
/// One-way calls over shared memory to a real server process: the client holds consecutive one-way frames in batches
/// and the server drains runs of them in one loop (docs/remoting.md, "Shared-memory transport").
/// </summary>
public sealed class OneWayBatchTests(ShmHostFixture fixture) : IClassFixture<ShmHostFixture>
{
    [Fact]
    public async Task A_lone_one_way_call_arrives_with_nothing_sent_after_it_on_its_connection()
    {
        // The probe waits on a connection of its own: nothing more goes out on the one that made the call.
        using var shapes = Remote.Open<IShapes>(fixture.Host.Address);
        Assert.Equal("shm", shapes.Transport);
        Assert.Equal(3, shapes.Proxy.Add(1, 2));
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        for (int i = 0; i < 50; i++)
        {
            string message = $"lone {i} {Guid.NewGuid()}";
            shapes.Proxy.Post(message);
            await fixture.Probe.Proxy.WaitPostedAsync(message, timeout.Token);
        }
        // And the last of a burst, which ends inside a held batch.
        string last = "";
        for (int i = 0; i < 1000; i++)
        {
            last = $"burst {i} {Guid.NewGuid()}";
            shapes.Proxy.Post(last);
        }
        await fixture.Probe.Proxy.WaitPostedAsync(last, timeout.Token);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void One_way_calls_in_batches_all_arrive_and_inline_in_the_order_they_were_sent(bool inline)
    {
        // Under Concurrent dispatch (the default) one-way calls start in order on the receive thread, but one that is
        // held up long enough hands the receiving to another thread, so only Inline promises the order they end in.
        using HostProcess? inlineHost = inline ? HostProcess.Start($"shm://{HostProcess.UniqueName("oneway")}", "--inline") : null;
        using var log = Remote.Open<IOneWayLog>(inlineHost?.Address ?? fixture.Host.Address);
        Assert.Equal("shm", log.Transport);
        const int Count = 100_000;
        var received = new List<int>(Count);
        for (int round = 0; round < 4; round++)
        {
            for (int i = 0; i < Count / 4; i++)
            {
                log.Proxy.Append(round * (Count / 4) + i);
            }
            received.AddRange(log.Proxy.Take()); // a call: it publishes the batch the last calls are held in
        }
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (received.Count < Count && DateTime.UtcNow < deadline)
        {
            received.AddRange(log.Proxy.Take()); // Concurrent: a call handed over may still be running
        }
        if (inline)
        {
            Assert.Equal(Enumerable.Range(0, Count), received);
        }
        else
        {
            Assert.Equal(Enumerable.Range(0, Count), received.Order());
        }
    }

    [Fact]
    public async Task One_way_calls_to_two_objects_interleaved_on_one_connection_all_arrive_at_their_own_object()
    {
        // One connection, two objects: consecutive frames of a run name different targets.
        string name = fixture.Host.Address["shm://".Length..];
        using var connection = new XCallConnection(ShmTransport.Connect(name));
        connection.Start();
        IOneWayLog log = connection.GetService<IOneWayLog>();
        IShapes shapes = connection.GetService<IShapes>();
        log.Take(); // empty what an earlier test on this server may have left
        const int Count = 20_000;
        string last = "";
        for (int i = 0; i < Count; i++)
        {
            log.Append(i);
            if (i % 3 == 0)
            {
                last = $"interleaved {i} {Guid.NewGuid()}";
                shapes.Post(last);
            }
        }
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await fixture.Probe.Proxy.WaitPostedAsync(last, timeout.Token);
        Assert.Equal(Enumerable.Range(0, Count), await TakeAllAsync(log, Count, timeout.Token));
    }

    [Fact]
    public async Task One_way_calls_that_throw_inside_a_batch_lose_none_of_the_calls_after_them()
    {
        // Every seventh call throws on the server: it is reported there (OneWayCallFailed), and the run goes on.
        using var log = Remote.Open<IOneWayLog>(fixture.Host.Address);
        Assert.Equal("shm", log.Transport);
        log.Proxy.Take();
        const int Count = 20_000;
        var expected = new List<int>(Count);
        for (int i = 0; i < Count; i++)
        {
            bool fails = i % 7 == 3;
            log.Proxy.AppendOrThrow(fails ? -1 : i);
            if (!fails)
            {
                expected.Add(i);
            }
        }
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        Assert.Equal(expected, await TakeAllAsync(log.Proxy, expected.Count, timeout.Token));
        Assert.Equal(7, fixture.Shapes.Proxy.Add(3, 4)); // the connection and the server live on
    }

    [Fact]
    public async Task One_way_calls_of_several_unmanaged_arguments_arrive_with_each_argument_in_its_place()
    {
        // The proxy puts each argument at its offset in one buffer (ProxyBase.PutArgument): an int, a double and a
        // struct with padding, whose values would come out shifted or torn if an offset were wrong.
        using var log = Remote.Open<IOneWayLog>(fixture.Host.Address);
        Assert.Equal("shm", log.Transport);
        log.Proxy.Take();
        var expected = new List<int>();
        for (int i = 0; i < 200; i++)
        {
            var extra = new MixedValue { Tag = (byte)(i % 251), Big = 1_000_000 + i, Small = (short)(-i) };
            log.Proxy.AppendMixed(i, i + 0.5, extra);
            expected.AddRange([i, (i * 1000) + 500, extra.Tag, (int)extra.Big, extra.Small]);
        }
        expected.Sort(); // as TakeAllAsync returns them: a wrong offset still shows, as values no call sent
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        Assert.Equal(expected, await TakeAllAsync(log.Proxy, expected.Count, timeout.Token));
    }

    /// <summary>Takes from <paramref name="log"/> until <paramref name="count"/> values came (calls handed over to
    /// another thread may still be running), in the order they ran (Concurrent dispatch: one handed over may run later).</summary>
    internal static async Task<List<int>> TakeAllAsync(IOneWayLog log, int count, CancellationToken cancellationToken)
    {
        var received = new List<int>(count);
        while (received.Count < count)
        {
            cancellationToken.ThrowIfCancellationRequested();
            int[] taken = log.Take();
            received.AddRange(taken);
            if (taken.Length == 0)
            {
                await Task.Yield();
            }
        }
        received.Sort();
        return received;
    }

    [Fact]
    public async Task A_malformed_one_way_frame_inside_a_batch_closes_that_connection_only()
    {
        string name = fixture.Host.Address["shm://".Length..];
        using var connection = new XCallConnection(ShmTransport.Connect(name));
        var closed = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        connection.Closed += (_, error) => closed.TrySetResult(error);
        connection.Start();
        IShapes shapes = connection.GetService<IShapes>();
        string before = $"before {Guid.NewGuid()}";
        for (int i = 0; i < 10; i++)
        {
            shapes.Post(i == 9 ? before : "filler");
        }
        // A one-way frame for an object the server never exposed, between one-way calls of the same batch.
        connection.Channel.BeginFrame(new FrameHeader(FrameKind.OneWay, 0, 0xbad0b1ec7, 1), 0);
        connection.Channel.CommitFrame();
        try
        {
            for (int i = 0; i < 10; i++)
            {
                shapes.Post("after");
            }
        }
        catch (XCallDisconnectedException)
        {
            // The server may have read the bad frame and closed the connection already.
        }
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await fixture.Probe.Proxy.WaitPostedAsync(before, timeout.Token); // what came before the bad frame ran
        await closed.Task.WaitAsync(timeout.Token); // the server closed this connection
        Assert.Throws<XCallDisconnectedException>(() => shapes.Add(1, 2));
        Assert.Equal(7, fixture.Shapes.Proxy.Add(3, 4)); // the server serves its other connections
    }
}

/// <summary>
/// One-way calls of unmanaged arguments over tcp (the channel's default <see cref="FrameChannel.SendFrame"/>:
/// begin, copy, commit) to a real server process: every call arrives.
/// </summary>
public sealed class TcpOneWayTests(TcpHostFixture fixture) : IClassFixture<TcpHostFixture>
{
    [Fact]
    public async Task One_way_calls_of_unmanaged_arguments_all_arrive_over_tcp()
    {
        using var log = Remote.Open<IOneWayLog>(fixture.Host.Address);
        Assert.Equal("tcp", log.Transport);
        log.Proxy.Take();
        const int Count = 5_000;
        for (int i = 0; i < Count; i++)
        {
            log.Proxy.Append(i);
        }
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        List<int> received = await OneWayBatchTests.TakeAllAsync(log.Proxy, Count, timeout.Token);
        Assert.Equal(Enumerable.Range(0, Count), received);
    }
}
