using System.Diagnostics;
using System.Net;
using XCall.Marshal;
using XCall.Runtime.CompilerServices;
using XCall.Runtime;
using XCall.Transport.Tcp.TestHost;
using XCall.Transport.Tcp;
using XCall.Transport;
using XCall;

// A peer for the TCP transport tests, run as its own process (and inside network namespaces):
//   server <address> <port>                       echo server; prints "READY <port>", then serves until killed
//   client <host> <port> <calls> <bytes>          echo calls with content checks; prints "OK <calls>"
//   pingpong <host> <port> <iterations> <bytes>   raw-channel round trips; prints "RTT <ns per round trip>"
//   callserver <address> <port>                   XCallConnection server with a hand-written dispatcher
//   callpingpong <host> <port> <iterations>       XCallConnection sync calls with a 4-byte int; prints "RTT ..."
// Options after the positional arguments: --heartbeat <ms> --timeout <ms> --spin <µs> (reply spin) --no-lead (callers never read).
Console.Out.Flush();
string mode = args.Length > 0 ? args[0] : "";
TcpOptions options = ParseOptions(args);
try
{
    switch (mode)
    {
        case "server":
            await Serve(args[1], int.Parse(args[2]), options, call: false);
            return 0;
        case "callserver":
            await Serve(args[1], int.Parse(args[2]), options, call: true);
            return 0;
        case "client":
            return await RunClient(args[1], int.Parse(args[2]), int.Parse(args[3]), int.Parse(args[4]), options);
        case "pingpong":
            return RunPingPong(args[1], int.Parse(args[2]), int.Parse(args[3]), int.Parse(args[4]), options);
        case "callpingpong":
            return RunCallPingPong(args[1], int.Parse(args[2]), int.Parse(args[3]), options);
        default:
            Console.Error.WriteLine("usage: server|callserver|client|pingpong|callpingpong ...");
            return 2;
    }
}
catch (Exception ex)
{
    Console.WriteLine($"FAIL {ex.GetType().Name}: {ex.Message}");
    return 1;
}

static TcpOptions ParseOptions(string[] args)
{
    var options = new TcpOptions();
    for (int i = 0; i < args.Length; i++)
    {
        if (args[i] == "--heartbeat" && i + 1 < args.Length)
        {
            options = options with { HeartbeatInterval = TimeSpan.FromMilliseconds(int.Parse(args[i + 1])) };
        }
        else if (args[i] == "--spin" && i + 1 < args.Length)
        {
            options = options with { ReplySpinTime = TimeSpan.FromMicroseconds(int.Parse(args[i + 1])) };
        }
        else if (args[i] == "--no-lead")
        {
            options = options with { CallerReadsReplies = false };
        }
        else if (args[i] == "--timeout" && i + 1 < args.Length)
        {
            options = options with { HeartbeatTimeout = TimeSpan.FromMilliseconds(int.Parse(args[i + 1])) };
        }
    }
    return options;
}

static async Task Serve(string address, int port, TcpOptions options, bool call)
{
    using TcpChannelListener listener = TcpTransport.Listen(new IPEndPoint(IPAddress.Parse(address), port), options);
    Console.WriteLine($"READY {listener.LocalEndpoint.Port}");
    while (true)
    {
        FrameChannel channel = await listener.AcceptAsync();
        if (call)
        {
            var connection = new XCallConnection(channel, new ConnectionOptions { DispatchMode = DispatchMode.Inline });
            connection.ExposeRoot(new object(), new EchoIntDispatcher());
            connection.Start();
        }
        else
        {
            channel.Start(new EchoHandler(channel));
        }
        Console.WriteLine("ACCEPTED");
    }
}

static async Task<int> RunClient(string host, int port, int calls, int bytes, TcpOptions options)
{
    using FrameChannel channel = await TcpTransport.ConnectAsync(host, port, options);
    var replies = new ReplyWaiter();
    channel.Start(replies);
    byte[] payload = new byte[bytes];
    for (int i = 0; i < calls; i++)
    {
        new Random(i).NextBytes(payload);
        var writer = new MarshalWriter(channel.BeginFrame(new FrameHeader(FrameKind.Call, (ulong)i + 1, 0, 7)));
        writer.WriteBlock(payload);
        writer.Flush();
        channel.CommitFrame();
        byte[] reply = replies.Wait((ulong)i + 1);
        if (!reply.AsSpan().SequenceEqual(payload))
        {
            Console.WriteLine($"FAIL reply {i} differs");
            return 1;
        }
    }
    Console.WriteLine($"OK {calls} {channel.RemoteEndpoint}");
    return 0;
}

static int RunPingPong(string host, int port, int iterations, int bytes, TcpOptions options)
{
    using FrameChannel channel = TcpTransport.Connect(host, port, options);
    var replies = new ReplyWaiter();
    channel.Start(replies);
    byte[] payload = new byte[bytes];
    void One(ulong id)
    {
        var writer = new MarshalWriter(channel.BeginFrame(new FrameHeader(FrameKind.Call, id, 0, 7)));
        writer.WriteBlock(payload);
        writer.Flush();
        channel.CommitFrame();
        replies.Wait(id);
    }
    ulong id = 0;
    for (int i = 0; i < Math.Min(iterations, 20_000); i++)
    {
        One(++id);
    }
    var results = new List<double>();
    for (int round = 0; round < 5; round++)
    {
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < iterations; i++)
        {
            One(++id);
        }
        results.Add(Stopwatch.GetElapsedTime(start).TotalNanoseconds / iterations);
    }
    results.Sort();
    Console.WriteLine($"RTT {results[2]:0} ns median of 5 rounds x {iterations} (min {results[0]:0}, max {results[4]:0}), {bytes} B payload");
    return 0;
}

static int RunCallPingPong(string host, int port, int iterations, TcpOptions options)
{
    using var connection = new XCallConnection(TcpTransport.Connect(host, port, options));
    connection.Start();
    int Call(int value)
    {
        PendingCall call = connection.BeginCall(0, EchoIntDispatcher.MethodId, isAsync: false);
        MarshalWriter writer = call.Arguments();
        writer.WriteInt32(value);
        call.SendAndWait(ref writer);
        MarshalReader reader = call.GetReplyReader();
        int result = reader.ReadInt32();
        call.End();
        return result;
    }
    for (int i = 0; i < Math.Min(iterations, 20_000); i++)
    {
        Call(i);
    }
    var results = new List<double>();
    for (int round = 0; round < 5; round++)
    {
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < iterations; i++)
        {
            if (Call(i) != i)
            {
                throw new InvalidOperationException("wrong reply");
            }
        }
        results.Add(Stopwatch.GetElapsedTime(start).TotalNanoseconds / iterations);
    }
    results.Sort();
    object? leads = typeof(TcpTransport).Assembly.GetType("XCall.Transport.Tcp.TcpFrameChannel")
        ?.GetProperty("Leads", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static)?.GetValue(null);
    Console.WriteLine($"RTT {results[2]:0} ns median of 5 rounds x {iterations} (min {results[0]:0}, max {results[4]:0}), XCallConnection int call; {leads} of {iterations * 5 + Math.Min(iterations, 20_000)} waits read their own reply");
    return 0;
}

/// <summary>Client-side handler: keeps each reply's payload and wakes the caller waiting for it.</summary>
internal sealed class ReplyWaiter : IFrameHandler
{
    private readonly object _gate = new();
    private readonly Dictionary<ulong, byte[]> _replies = [];
    private Exception? _closed;
    private bool _isClosed;

    public MarshalLimits Limits => MarshalLimits.Default;

    public void OnFrame(in FrameHeader header, ref MarshalReader payload)
    {
        byte[] bytes = payload.ReadBytesInPlace((int)payload.Remaining).ToArray();
        lock (_gate)
        {
            _replies[header.CallId] = bytes;
            Monitor.PulseAll(_gate);
        }
    }

    public void OnClosed(Exception? error)
    {
        lock (_gate)
        {
            _isClosed = true;
            _closed = error;
            Monitor.PulseAll(_gate);
        }
    }

    public byte[] Wait(ulong callId)
    {
        var spinner = new SpinWait();
        while (true)
        {
            lock (_gate)
            {
                if (_replies.Remove(callId, out byte[]? reply))
                {
                    return reply;
                }
                if (_isClosed)
                {
                    throw new XCallDisconnectedException("tcp", _closed?.Message ?? "closed", _closed);
                }
                if (spinner.Count > 50)
                {
                    Monitor.Wait(_gate);
                    continue;
                }
            }
            spinner.SpinOnce(sleep1Threshold: -1);
        }
    }
}
