using System.Globalization;
using XCall.Chaos;

// Orchestrators (scripts/chaos.sh, load.sh, soak.sh):
//   XCall.Chaos chaos ITERATIONS [SEED]      kill -9 / SIGSTOP of servers and callers at random moments of calls
//   XCall.Chaos load CALLERS CALLS           checked calls per transport, latency percentiles
//   XCall.Chaos soak MINUTES                 reconnecting callers, server memory / descriptors / threads sampled
//   XCall.Chaos heap MIB                     the server's live heap 5 s after a call with a MIB-sized argument
// Processes they start:
//   XCall.Chaos serve NAME LEDGER | append ADDRESS TRANSPORT TAG | load ADDRESS TRANSPORT THREADS CALLS | cycle ADDRESS TRANSPORT SECONDS
static int I(string s) => int.Parse(s, CultureInfo.InvariantCulture);
return args switch
{
    ["chaos", string n] => ChaosRun.Run(I(n), seed: Environment.ProcessId),
    ["chaos", string n, string seed] => ChaosRun.Run(I(n), I(seed)),
    ["load", string callers, string calls] => LoadRun.Run(I(callers), long.Parse(calls, CultureInfo.InvariantCulture)),
    ["soak", string minutes] => SoakRun.Run(double.Parse(minutes, CultureInfo.InvariantCulture)),
    ["heap", string mib] => HeapRun.Run(I(mib)),
    ["serve", string name, string ledger] => Server.Run(name, ledger),
    ["append", string address, string transport, string tag] => Caller.Append(address, transport, long.Parse(tag, CultureInfo.InvariantCulture)),
    ["load", string address, string transport, string threads, string calls] => Caller.Load(address, transport, I(threads), long.Parse(calls, CultureInfo.InvariantCulture)),
    ["cycle", string address, string transport, string seconds] => Caller.Cycle(address, transport, double.Parse(seconds, CultureInfo.InvariantCulture)),
    _ => Usage(),
};

static int Usage()
{
    Console.Error.WriteLine("usage: XCall.Chaos chaos ITERATIONS [SEED] | load CALLERS CALLS | soak MINUTES | heap MIB");
    return 2;
}
