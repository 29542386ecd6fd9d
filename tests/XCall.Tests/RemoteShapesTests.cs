using XCall.Tests.Contracts;
using XCall.Tests.Shared;

namespace XCall.Tests;

/// <summary>A host process per test class, serving the shape contract at an address.</summary>
public abstract class HostFixture : IDisposable
{
    protected HostFixture(string address, string[] hostArgs, RemoteOptions? options = null)
    {
        Host = HostProcess.Start(address, hostArgs);
        Shapes = Remote.Open<IShapes>(Host.Address, options);
        Probe = Remote.Open<IProbe>(Host.Address, options);
    }

    public HostProcess Host { get; }
    public RemoteService<IShapes> Shapes { get; }
    public RemoteService<IProbe> Probe { get; }

    public void Dispose()
    {
        Shapes.Dispose();
        Probe.Dispose();
        Host.Dispose();
    }
}

public sealed class ShmHostFixture() : HostFixture($"shm://{HostProcess.UniqueName("shapes")}", []);

public sealed class TcpHostFixture() : HostFixture($"tcp://127.0.0.1:0/{HostProcess.UniqueName("shapes")}", ["--no-shm"]);

public sealed class TcpInlineHostFixture() : HostFixture($"tcp://127.0.0.1:0/{HostProcess.UniqueName("inline")}", ["--inline", "--no-shm"]);

public sealed class ShmInlineHostFixture() : HostFixture($"shm://{HostProcess.UniqueName("inline")}", ["--inline"]);

/// <summary>Every method shape over shared memory, to a real server process.</summary>
public sealed class ShmShapesTests(ShmHostFixture fixture) : ShapesContractTests, IClassFixture<ShmHostFixture>
{
    protected override IShapes Shapes => fixture.Shapes.Proxy;
    protected override IProbe Probe => fixture.Probe.Proxy;

    [Fact]
    public void The_service_runs_in_another_process_over_shm()
    {
        Assert.Equal("shm", fixture.Shapes.Transport);
        Assert.Equal(fixture.Host.ProcessId, Probe.ProcessId());
        Assert.NotEqual(Environment.ProcessId, Probe.ProcessId());
    }
}

/// <summary>Every method shape over TCP on loopback, to a real server process.</summary>
public sealed class TcpShapesTests(TcpHostFixture fixture) : ShapesContractTests, IClassFixture<TcpHostFixture>
{
    protected override IShapes Shapes => fixture.Shapes.Proxy;
    protected override IProbe Probe => fixture.Probe.Proxy;

    [Fact]
    public void The_service_runs_in_another_process_over_tcp()
    {
        Assert.Equal("tcp", fixture.Shapes.Transport);
        Assert.Equal(fixture.Host.ProcessId, Probe.ProcessId());
    }
}

/// <summary>
/// TCP to a server that dispatches inline: replies to calls that arrive together are held back and leave in
/// one write, and calls pipelined behind others leave in batches from a pool thread.
/// </summary>
public sealed class TcpInlineTests(TcpInlineHostFixture fixture) : IClassFixture<TcpInlineHostFixture>
{
    private IShapes Shapes => fixture.Shapes.Proxy;

    [Fact]
    public async Task Pipelined_async_calls_with_sync_calls_among_them_get_their_own_results()
    {
        const int Rounds = 20;
        const int Calls = 500;
        for (int round = 0; round < Rounds; round++)
        {
            var sums = new Task<int>[Calls];
            var concats = new Task<string>[Calls];
            var pings = new Task[Calls];
            for (int i = 0; i < Calls; i++)
            {
                sums[i] = Shapes.AddAsync(round, i);
                pings[i] = Shapes.PingAsync().AsTask();
                concats[i] = Shapes.ConcatAsync(round.ToString(), i.ToString()).AsTask();
                if (i % 100 == 0)
                {
                    Assert.Equal($"{round}/{i}", Shapes.Echo($"{round}/{i}"));
                }
            }
            Assert.Equal(Enumerable.Range(0, Calls).Select(i => round + i), await Task.WhenAll(sums));
            Assert.Equal(Enumerable.Range(0, Calls).Select(i => $"{round}{i}"), await Task.WhenAll(concats));
            await Task.WhenAll(pings);
        }
    }

    [Fact]
    public void Sync_calls_from_many_threads_get_their_own_results()
    {
        const int Threads = 16;
        const int Calls = 2_000;
        int failures = 0;
        Parallel.For(0, Threads, new ParallelOptions { MaxDegreeOfParallelism = Threads }, t =>
        {
            for (int i = 0; i < Calls; i++)
            {
                if (Shapes.Add(t, i) != t + i)
                {
                    Interlocked.Increment(ref failures);
                }
            }
        });
        Assert.Equal(0, failures);
    }
}
