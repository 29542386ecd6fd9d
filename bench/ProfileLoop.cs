using System.Diagnostics;
using System.Globalization;

namespace XCall.Bench;

/// <summary>
/// <c>--loop shm|tcp int|oneway|pipelined SECONDS</c>: one form of call in a loop against a server process with the
/// default settings (the throughput rows' options), for a profiler to attach to. It prints both pids first (for
/// <c>perf record -p</c>), then the rate it reached. Forms: <c>int</c> a sync <c>void Test(int)</c>; <c>oneway</c>
/// 1,000 one-way calls then a sync call; <c>pipelined</c> 1,000 <c>Task&lt;int&gt;</c> calls then awaiting them all;
/// <c>pipelined-valuetask</c> the same with <c>ValueTask&lt;int&gt;</c>. The last line also gives the bytes the process
/// allocated per call (all threads).
/// </summary>
internal static class ProfileLoop
{
    private const int Batch = 1000;

    public static async Task<int> Run(string transport, string form, double seconds)
    {
        if (form is not ("int" or "oneway" or "pipelined" or "pipelined-valuetask"))
        {
            Console.Error.WriteLine($"--loop: unknown form '{form}' (int, oneway, pipelined or pipelined-valuetask)");
            return 2;
        }
        RemoteServer server = RemoteServer.Shared(transport);
        try
        {
            using RemoteService<ICallCost> cost = Remote.Open<ICallCost>(server.Address, RemoteServer.Options);
            using RemoteService<IThroughput> throughput = Remote.Open<IThroughput>(server.Address, RemoteServer.Options);
            Console.WriteLine($"client pid {Environment.ProcessId}, server pid {server.Process.Id}");
            Console.Out.Flush();
            var tasks = new Task<int>[Batch];
            var valueTasks = new ValueTask<int>[Batch];
            long allocated = GC.GetTotalAllocatedBytes(precise: true);
            var clock = Stopwatch.StartNew();
            long calls = 0;
            while (clock.Elapsed.TotalSeconds < seconds)
            {
                switch (form)
                {
                    case "int":
                        for (int i = 0; i < Batch; i++)
                        {
                            cost.Proxy.Test(i);
                        }
                        break;
                    case "oneway":
                        for (int i = 0; i < Batch; i++)
                        {
                            throughput.Proxy.TestOneWay(i);
                        }
                        throughput.Proxy.OneWayCount();
                        break;
                    case "pipelined-valuetask":
                        for (int i = 0; i < Batch; i++)
                        {
                            valueTasks[i] = throughput.Proxy.TestValueAsync(i);
                        }
                        for (int i = 0; i < Batch; i++)
                        {
                            await valueTasks[i].ConfigureAwait(false);
                        }
                        break;
                    default:
                        for (int i = 0; i < Batch; i++)
                        {
                            tasks[i] = throughput.Proxy.TestAsync(i);
                        }
                        foreach (Task<int> task in tasks)
                        {
                            await task.ConfigureAwait(false);
                        }
                        break;
                }
                calls += Batch;
            }
            double ns = clock.Elapsed.TotalNanoseconds / calls;
            double bytes = (double)(GC.GetTotalAllocatedBytes(precise: true) - allocated) / calls;
            string drains = throughput.Connection is { } connection && form.StartsWith("pipelined", StringComparison.Ordinal)
                ? string.Create(CultureInfo.InvariantCulture, $", {connection.Completions.Completed * 100.0 / calls:0}% completed by drainers in {connection.Completions.Runs:N0} runs")
                : "";
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{form} over {transport}: {calls:N0} calls, {ns:0.0} ns per call, {1e3 / ns:0.00} M calls/s, {bytes:0.0} B allocated per call{drains}"));
        }
        finally
        {
            RemoteServer.StopShared();
        }
        return 0;
    }
}
