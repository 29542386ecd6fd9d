using System.Diagnostics;
using System.Globalization;

namespace XCall.Bench;

/// <summary>
/// <c>--stream [shm|tcp] [ITEMS [ROUNDS]]</c>: an <c>IAsyncEnumerable&lt;int&gt;</c> of ITEMS (default 1,000,000)
/// items pulled to its end with <c>await foreach</c>, client and server with every default (one server process per
/// transport; tcp with shared memory turned off, as the other tcp rows). Without a transport, shm and tcp alternate
/// round by round, with the same iterator enumerated in this process (the <c>local</c> row). Prints items per second per round and their median, and the budget line for shm: at least
/// 10 million items per second (issue 25).
/// </summary>
internal static class StreamProbe
{
    private const double BudgetItemsPerSecond = 10e6;

    public static int Run(string[] args)
    {
        string[] transports = args.Length > 0 && args[0] is "shm" or "tcp" ? [args[0]] : ["shm", "tcp"];
        int at = args.Length > 0 && args[0] is "shm" or "tcp" ? 1 : 0;
        int items = args.Length > at ? int.Parse(args[at], CultureInfo.InvariantCulture) : 1_000_000;
        int rounds = args.Length > at + 1 ? int.Parse(args[at + 1], CultureInfo.InvariantCulture) : 7;
        var servers = new List<RemoteServer>();
        var services = new List<RemoteService<IStreamCost>>();
        try
        {
            foreach (string transport in transports)
            {
                RemoteServer server = RemoteServer.Start(transport, noOptions: true);
                servers.Add(server);
                RemoteOptions client = transport == "tcp" ? new RemoteOptions { PreferSharedMemory = false } : new RemoteOptions();
                services.Add(Remote.Open<IStreamCost>(server.Address, client));
            }
            // The same iterator enumerated in this process, in the same rounds: what the items cost with no transport.
            string[] rows = [.. transports, "local"];
            IStreamCost[] sources = [.. services.Select(s => s.Proxy), new StreamCostService()];
            var perSecond = rows.Select(_ => new List<double>()).ToArray();
            for (int warm = 0; warm < 2; warm++)
            {
                foreach (IStreamCost source in sources)
                {
                    Pull(source, items);
                }
            }
            for (int round = 1; round <= rounds; round++)
            {
                for (int k = 0; k < rows.Length; k++)
                {
                    // The order flips every round, so no row always runs first.
                    int t = round % 2 == 1 ? k : rows.Length - 1 - k;
                    double rate = Pull(sources[t], items);
                    perSecond[t].Add(rate);
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"round {round}: {rows[t]} IAsyncEnumerable<int> x {items:N0}, defaults: {rate / 1e6,7:0.00} M items/s ({1e9 / rate:0.0} ns/item)"));
                }
            }
            for (int t = 0; t < rows.Length; t++)
            {
                double median = Stats.Median(perSecond[t]);
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"median over {rounds} rounds: {rows[t]} IAsyncEnumerable<int> x {items:N0}, defaults: {median / 1e6:0.00} M items/s ({1e9 / median:0.0} ns/item)"));
                if (rows[t] == "shm")
                {
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"budget: IAsyncEnumerable<int> over shm at least {BudgetItemsPerSecond / 1e6:0} M items/s: {(median >= BudgetItemsPerSecond ? "met" : "NOT met")} ({median / 1e6:0.00} M items/s, {median / BudgetItemsPerSecond:0.00}x the budget)"));
                }
            }
            return 0;
        }
        finally
        {
            foreach (RemoteService<IStreamCost> service in services)
            {
                service.Dispose();
            }
            foreach (RemoteServer server in servers)
            {
                server.Dispose();
            }
        }
    }

    /// <summary>Pulls the whole stream; returns items per second. The sum is checked, so nothing is skipped.</summary>
    private static double Pull(IStreamCost service, int items)
    {
        long start = Stopwatch.GetTimestamp();
        long sum = Sum(service, items).GetAwaiter().GetResult();
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        long expected = (long)items * (items - 1) / 2;
        if (sum != expected)
        {
            throw new InvalidOperationException($"The stream summed to {sum}, not {expected}.");
        }
        return items / seconds;
    }

    private static async Task<long> Sum(IStreamCost service, int items)
    {
        long sum = 0;
        await foreach (int value in service.Ints(items).ConfigureAwait(false))
        {
            sum += value;
        }
        return sum;
    }
}
