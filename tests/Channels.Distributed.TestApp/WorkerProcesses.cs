using System.Diagnostics;
using XCall.Channels.Distributed.TestApp;
using XCall.Cluster;

[assembly: XCallWorker(typeof(TestWorkerSetup))]

namespace XCall.Channels.Distributed.TestApp;

/// <summary>The processes the DistParallel tests ship; the ids are how they travel (no type name does).</summary>
[XCallKnownType(typeof(SumProcess), 1)]
[XCallKnownType(typeof(DieProcess), 2)]
public interface ITestProcess : IProcess;

/// <summary>What a <see cref="SumProcess"/> reports: its sum and the process it ran in.</summary>
public readonly record struct SumReport(long Sum, int Pid);

/// <summary>
/// Sums <paramref name="Values"/> and writes the sum, with the pid it ran in, to the named channel
/// <paramref name="Result"/>; with a <paramref name="Gate"/>, first syncs on that named barrier of
/// <paramref name="Parties"/> (so every process of a run is running at once before any ends).
/// </summary>
public sealed record SumProcess(string Result, int[] Values, string Gate, int Parties) : ITestProcess
{
    /// <inheritdoc/>
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        CspWorld world = CspWorld.Current ?? throw new InvalidOperationException("SumProcess runs under DistParallel.");
        if (Gate.Length > 0)
        {
            NamedBarrier gate = await world.BarrierAsync(Gate, Parties, cancellationToken);
            await gate.SyncAsync();
        }
        IChannelOut<SumReport> result = await world.OpenOutAsync<SumReport>(Result, cancellationToken: cancellationToken);
        await result.WriteAsync(new SumReport(Values.Sum(v => (long)v), Environment.ProcessId), cancellationToken);
    }
}

/// <summary>Kills the process it runs in with SIGKILL, as kill -9 would; refuses to when that is <paramref name="MasterPid"/>.</summary>
public sealed record DieProcess(int MasterPid) : ITestProcess
{
    /// <inheritdoc/>
    public Task RunAsync(CancellationToken cancellationToken)
    {
        if (Environment.ProcessId == MasterPid)
        {
            throw new InvalidOperationException("DieProcess ran in the program that shipped it; it kills only workers.");
        }
        using Process self = Process.GetCurrentProcess();
        self.Kill(); // SIGKILL on Linux
        return Task.Delay(Timeout.Infinite, cancellationToken);
    }
}

/// <summary>Only here so that the generator emits the marshaller of <see cref="ITestProcess"/> and its known types.</summary>
[Remotable]
public interface IShippedProcesses
{
    /// <summary>Takes a process.</summary>
    void Take(ITestProcess process);
}

/// <summary>The processes this program ships to workers.</summary>
public static class TestProcesses
{
    /// <summary>The kinds of <see cref="ITestProcess"/>.</summary>
    public static ProcessKinds Kinds { get; } = ProcessKinds.Of<ITestProcess, XCall.Generated.XCall_Channels_Distributed_TestApp_ITestProcess_XCallMarshaller>();
}

/// <summary>What this program serves on a worker host (<c>xcall worker --assembly</c> runs it): its processes.</summary>
public sealed class TestWorkerSetup : IWorkerSetup
{
    /// <inheritdoc/>
    public Task ConfigureAsync(WorkerHost host, CancellationToken cancellationToken)
    {
        DistParallel.Serve(host, CspWorld.Attach(host.World), TestProcesses.Kinds);
        return Task.CompletedTask;
    }
}
