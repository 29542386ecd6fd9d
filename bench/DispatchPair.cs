using System.Globalization;

namespace XCall.Bench;

/// <summary>
/// <c>--dispatch-pair shm|tcp [ROUNDS [CALLS]]</c> (CALLS per int burst, a fifth of it per callback burst): one caller's <c>int</c> call with no option set (client and server with
/// every default, so <see cref="DispatchMode.Concurrent"/>) against the same call to a server with
/// <see cref="DispatchMode.Inline"/>, in alternating bursts (the order flips every round), and the <c>callback</c>
/// call (the server calls the caller back once) with no option set in the same rounds. The medians of the per-round
/// ratios are the figures: default / inline, callback / default int.
/// </summary>
internal static class DispatchPair
{
    private static readonly CallSink s_sink = new();

    public static int Run(string transport, int rounds, int calls = 0)
    {
        calls = calls > 0 ? calls : transport == "shm" ? 100_000 : 5_000;
        int callbacks = Math.Max(5, calls / 5);
        using RemoteServer plain = RemoteServer.Start(transport, noOptions: true);
        using RemoteServer inline = RemoteServer.Start(transport, inline: true);
        // A tcp address would be served over shm to a local client by default: the tcp rows turn that off, nothing else.
        RemoteOptions plainClient = transport == "tcp" ? new RemoteOptions { PreferSharedMemory = false } : new RemoteOptions();
        using RemoteService<ICallCost> plainRemote = Remote.Open<ICallCost>(plain.Address, plainClient);
        using RemoteService<ICallCost> inlineRemote = Remote.Open<ICallCost>(inline.Address, RemoteServer.Options with { Connection = new ConnectionOptions { DispatchMode = DispatchMode.Inline } });
        ICallCost defaults = plainRemote.Proxy;
        ICallCost inlined = inlineRemote.Proxy;
        Action<ICallCost, int> intCall = static (p, i) => p.Test(i);
        Action<ICallCost, int> callback = static (p, i) => p.TestCallback(s_sink);
        for (int warm = 0; warm < 2; warm++)
        {
            SideBySide.Burst(defaults, calls, intCall);
            SideBySide.Burst(inlined, calls, intCall);
            SideBySide.Burst(defaults, callbacks, callback);
        }
        var toInline = new List<double>();
        var callbackToInt = new List<double>();
        var defaultNs = new List<double>();
        var inlineNs = new List<double>();
        var callbackNs = new List<double>();
        for (int round = 1; round <= rounds; round++)
        {
            double d, n;
            if (round % 2 == 1)
            {
                d = SideBySide.Burst(defaults, calls, intCall);
                n = SideBySide.Burst(inlined, calls, intCall);
            }
            else
            {
                n = SideBySide.Burst(inlined, calls, intCall);
                d = SideBySide.Burst(defaults, calls, intCall);
            }
            double c = SideBySide.Burst(defaults, callbacks, callback);
            defaultNs.Add(d);
            inlineNs.Add(n);
            callbackNs.Add(c);
            toInline.Add(d / n);
            callbackToInt.Add(c / d);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"round {round}: {transport} int, no option set {d,8:0.0} ns   int, DispatchMode.Inline {n,8:0.0} ns   ratio {d / n:0.00}x   callback, no option set {c,9:0.0} ns   {c / d:0.00}x int"));
        }
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"median over {rounds} rounds: {transport} int, no option set {Stats.Median(defaultNs):0.0} ns, int, DispatchMode.Inline {Stats.Median(inlineNs):0.0} ns, median ratio {Stats.Median(toInline):0.00}x; "
            + $"callback, no option set {Stats.Median(callbackNs):0.0} ns, median ratio to the int call {Stats.Median(callbackToInt):0.00}x"));
        return 0;
    }
}
