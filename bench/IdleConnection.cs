using System.Diagnostics;

namespace XCall.Bench;

/// <summary>Measures what an open but idle connection costs: CPU of both processes while nothing is called.</summary>
internal static class IdleConnection
{
    public static double CpuPercent(string transport)
    {
        using RemoteServer server = RemoteServer.Start(transport);
        using RemoteService<ICallCost> remote = Remote.Open<ICallCost>(server.Address, RemoteServer.Options);
        remote.Proxy.Test(1);
        // The budget is for a connection idle for 50 ms: let the idle strategy settle first.
        Thread.Sleep(50);
        Process self = Process.GetCurrentProcess();
        server.Process.Refresh();
        self.Refresh();
        TimeSpan before = server.Process.TotalProcessorTime + self.TotalProcessorTime;
        var clock = Stopwatch.StartNew();
        Thread.Sleep(2000);
        server.Process.Refresh();
        self.Refresh();
        TimeSpan used = server.Process.TotalProcessorTime + self.TotalProcessorTime - before;
        return 100.0 * used.TotalMilliseconds / clock.Elapsed.TotalMilliseconds;
    }
}
