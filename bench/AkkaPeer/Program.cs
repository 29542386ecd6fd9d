using System.Diagnostics;
using System.Globalization;
using Akka.Actor;
using Akka.Configuration;

// Two modes, each its own process:
//   receive                      hosts actor "sink" (adds each int it is told, answers "sum" with the sum); prints
//                                "port N" once it listens on loopback, and runs until its standard input closes.
//   send PORT MESSAGES ROUNDS    tells the sink MESSAGES ints per burst from one thread, then asks for the sum until
//                                every one arrived; prints "burst R: X messages/s" per burst.
// Akka.NET's defaults but the transport's address (loopback, any port) and the log level.
Config config = ConfigurationFactory.ParseString("""
    akka {
      loglevel = WARNING
      actor.provider = remote
      remote.dot-netty.tcp { hostname = 127.0.0.1, port = 0 }
    }
    """);
if (args.Length >= 1 && args[0] == "receive")
{
    using ActorSystem system = ActorSystem.Create("peer", config);
    system.ActorOf(Props.Create(() => new Sink()), "sink");
    int port = ((ExtendedActorSystem)system).Provider.DefaultAddress.Port ?? 0;
    Console.WriteLine($"port {port}");
    Console.Out.Flush();
    await Console.In.ReadToEndAsync();
    await system.Terminate();
    return 0;
}
if (args.Length == 4 && args[0] == "send")
{
    int port = int.Parse(args[1], CultureInfo.InvariantCulture);
    int messages = int.Parse(args[2], CultureInfo.InvariantCulture);
    int rounds = int.Parse(args[3], CultureInfo.InvariantCulture);
    using ActorSystem system = ActorSystem.Create("sender", config);
    IActorRef sink = await system.ActorSelection($"akka.tcp://peer@127.0.0.1:{port}/user/sink").ResolveOne(TimeSpan.FromSeconds(30));
    await BurstAsync(sink, messages / 10); // warm-up
    for (int round = 0; round < rounds; round++)
    {
        double rate = await BurstAsync(sink, messages);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"burst {round}: {rate:F0} messages/s"));
    }
    await system.Terminate();
    return 0;
}
Console.Error.WriteLine("usage: XCall.Bench.AkkaPeer receive | send PORT MESSAGES ROUNDS");
return 2;

static async Task<double> BurstAsync(IActorRef sink, int messages)
{
    long before = await sink.Ask<long>("sum", TimeSpan.FromSeconds(60));
    long start = Stopwatch.GetTimestamp();
    for (int i = 0; i < messages; i++)
    {
        sink.Tell(1);
    }
    // Messages of one sender to one actor arrive in order, so the sum after the last one counts them all.
    long after = await sink.Ask<long>("sum", TimeSpan.FromSeconds(120));
    double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
    if (after - before != messages)
    {
        throw new InvalidOperationException($"the sink counted {after - before} of {messages} messages");
    }
    return messages / seconds;
}

/// <summary>Adds each int it is told; answers "sum" with the sum.</summary>
internal sealed class Sink : ReceiveActor
{
    private long _sum;

    public Sink()
    {
        Receive<int>(value => _sum += value);
        Receive<string>(_ => Sender.Tell(_sum));
    }
}
