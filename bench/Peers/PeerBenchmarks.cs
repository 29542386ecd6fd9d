using System.Net.Sockets;
using BenchmarkDotNet.Attributes;
using Google.Protobuf;
using Grpc.Net.Client;
using StreamJsonRpc;
using XCall.Streams;
using XCall.Bench.Peers.Proto;

namespace XCall.Bench.Peers;

/// <summary>
/// Side-by-side rows of other RPC stacks for the <c>int</c> and <c>byte</c> signatures, server in a separate
/// process as for XCall's shm and tcp rows. Each operation is one round trip, awaited.
/// <list type="bullet">
/// <item><c>grpc-tcp</c>: grpc-dotnet, Kestrel (Grpc.AspNetCore) server, Grpc.Net.Client, h2c on 127.0.0.1.</item>
/// <item><c>grpc-uds</c>: the same over a Unix domain socket (Kestrel ListenUnixSocket, SocketsHttpHandler.ConnectCallback).</item>
/// <item><c>jsonrpc-uds</c>: StreamJsonRpc with its defaults (header-delimited, Newtonsoft.Json) over a Unix domain socket.</item>
/// <item><c>grpc-xcall-shm</c>: the grpc-uds service and client unchanged, over an XCall shared-memory stream (Kestrel with
/// XCall's transport, SocketsHttpHandler with XCall's ConnectCallback), default stream options.</item>
/// <item><c>jsonrpc-xcall-shm</c>: the jsonrpc-uds target and client unchanged, over an XCall shared-memory stream.</item>
/// </list>
/// </summary>
[MemoryDiagnoser]
public class PeerBenchmarks
{
    public static readonly string[] AllPeers = ["grpc-tcp", "grpc-uds", "grpc-xcall-shm", "jsonrpc-uds", "jsonrpc-xcall-shm"];

    /// <summary>The peers to measure; the runner may narrow it before running.</summary>
    public static string[] Selected { get; set; } = AllPeers;

    public static IEnumerable<string> Peers => Selected;

    [ParamsSource(nameof(Peers))]
    public string Peer { get; set; } = "grpc-tcp";

    private readonly byte[] _bytes = new byte[1000];
    private PeerServerProcess? _server;
    private GrpcChannel? _channel;
    private PeerCallCost.PeerCallCostClient? _grpc;
    private JsonRpc? _jsonRpc;

    [GlobalSetup]
    public void Setup()
    {
        _bytes[^1] = 1;
        switch (Peer)
        {
            case "grpc-tcp":
                _server = PeerServerProcess.Start("--serve-grpc", "tcp");
                _channel = GrpcChannel.ForAddress(_server.Address);
                break;
            case "grpc-uds":
                _server = PeerServerProcess.Start("--serve-grpc", "uds");
                _channel = GrpcChannel.ForAddress("http://localhost", new GrpcChannelOptions { HttpHandler = UdsHandler(_server.Address) });
                break;
            case "jsonrpc-uds":
                _server = PeerServerProcess.Start("--serve-jsonrpc", "uds");
                var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
                socket.Connect(new UnixDomainSocketEndPoint(_server.Address));
                _jsonRpc = JsonRpc.Attach(new NetworkStream(socket, ownsSocket: true));
                break;
            case "grpc-xcall-shm":
                _server = PeerServerProcess.Start("--serve-grpc", "xcall-shm");
                _channel = GrpcChannel.ForAddress("http://localhost", new GrpcChannelOptions
                {
                    HttpHandler = new SocketsHttpHandler { ConnectCallback = XCallStreams.ConnectCallback(_server.Address) },
                });
                break;
            case "jsonrpc-xcall-shm":
                _server = PeerServerProcess.Start("--serve-jsonrpc", "xcall-shm");
                _jsonRpc = JsonRpc.Attach(XCallStreams.ConnectAsync(_server.Address).GetAwaiter().GetResult());
                break;
            default:
                throw new InvalidOperationException($"Unknown peer {Peer} (known: {string.Join(", ", AllPeers)}).");
        }
        if (_channel is not null)
        {
            _grpc = new PeerCallCost.PeerCallCostClient(_channel);
        }
        // First calls: connection, HTTP/2 settings, JIT, all outside the measurement. Then calls for WarmUp: the
        // server process started a moment ago, and the tiered JIT of its and this process's gRPC, Kestrel or
        // StreamJsonRpc code keeps both cores busy for seconds; BenchmarkDotNet's own warm-up (a few 100 ms
        // iterations) would measure that instead of the calls.
        Int().GetAwaiter().GetResult();
        Bytes().GetAwaiter().GetResult();
        long start = System.Diagnostics.Stopwatch.GetTimestamp();
        while (System.Diagnostics.Stopwatch.GetElapsedTime(start) < WarmUp)
        {
            Int().GetAwaiter().GetResult();
            Bytes().GetAwaiter().GetResult();
        }
    }

    /// <summary>How long <see cref="Setup"/> calls the peer before BenchmarkDotNet measures it.</summary>
    internal static TimeSpan WarmUp { get; set; } = TimeSpan.FromSeconds(6);

    /// <summary>The id of the server process after <see cref="Setup"/>.</summary>
    internal int ServerProcessId => _server?.ProcessId ?? throw new InvalidOperationException("Not set up.");

    private static SocketsHttpHandler UdsHandler(string path) => new()
    {
        ConnectCallback = async (_, cancellationToken) =>
        {
            var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            try
            {
                await socket.ConnectAsync(new UnixDomainSocketEndPoint(path), cancellationToken).ConfigureAwait(false);
                return new NetworkStream(socket, ownsSocket: true);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        },
    };

    [GlobalCleanup]
    public void Cleanup()
    {
        _jsonRpc?.Dispose();
        _channel?.Dispose();
        _server?.Dispose();
        _jsonRpc = null;
        _channel = null;
        _grpc = null;
        _server = null;
    }

    [Benchmark(Description = "int")]
    public Task Int() => _grpc is { } grpc
        ? grpc.TestIntAsync(new IntRequest { Value = 42 }).ResponseAsync
        : _jsonRpc!.InvokeAsync("TestInt", 42);

    [Benchmark(Description = "byte")]
    public Task Bytes() => _grpc is { } grpc
        ? grpc.TestBytesAsync(new BytesRequest { Data = UnsafeByteOperations.UnsafeWrap(_bytes) }).ResponseAsync
        : _jsonRpc!.InvokeAsync("TestBytes", _bytes);
}
