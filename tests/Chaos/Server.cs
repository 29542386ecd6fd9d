using System.Diagnostics;
using System.Net;
using XCall.Runtime;
using XCall.Transport;
using XCall.Transport.Shm;
using XCall.Transport.Tcp;

namespace XCall.Chaos;

/// <summary>
/// `serve NAME LEDGER`: serves <see cref="ILedger"/> over shm://NAME and tcp on a loopback port, prints
/// "READY PORT", and "CLOSED TRANSPORT TIMESTAMP" (Stopwatch ticks: CLOCK_MONOTONIC, comparable across
/// processes) each time a connection closes. Runs until killed or its standard input closes.
/// </summary>
public static class Server
{
    public static int Run(string name, string ledger)
    {
        using var server = new XCallServer().Add<ILedger>(new Ledger(ledger));
        using ShmListener shm = ShmTransport.Listen(name);
        using TcpChannelListener tcp = TcpTransport.Listen(new IPEndPoint(IPAddress.Loopback, 0));
        StartAccepting(server, "shm", shm.Accept);
        StartAccepting(server, "tcp", tcp.Accept);
        Output.Line($"READY {tcp.LocalEndpoint.Port}");
        while (Console.In.ReadLine() is not null)
        {
        }
        return 0;
    }

    private static void StartAccepting(XCallServer server, string transport, Func<FrameChannel> accept)
    {
        var thread = new Thread(() =>
        {
            while (true)
            {
                FrameChannel channel;
                try
                {
                    channel = accept();
                }
                catch (ObjectDisposedException)
                {
                    return;
                }
                try
                {
                    XCallConnection connection = server.Attach(channel);
                    connection.Closed += (_, _) => Output.Line($"CLOSED {transport} {Stopwatch.GetTimestamp()}");
                }
                catch (Exception ex) when (ex is XCallException or ObjectDisposedException)
                {
                    // The peer went away during the start: the loop serves the next one.
                }
            }
        }) { IsBackground = true, Name = $"accept {transport}" };
        thread.Start();
    }
}

/// <summary>Lines to the orchestrator, whole and flushed.</summary>
public static class Output
{
    private static readonly object s_lock = new();

    public static void Line(string line)
    {
        lock (s_lock)
        {
            Console.Out.WriteLine(line);
            Console.Out.Flush();
        }
    }
}
