using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using StreamJsonRpc;
using XCall.AspNetCore;
using XCall.Streams;
using XCall.Bench.Peers.Proto;

namespace XCall.Bench.Peers;

/// <summary>
/// The server side of the peer rows: the benchmark program started again in its own process with
/// <c>--serve-grpc tcp|uds|xcall-shm ENDPOINT</c> or <c>--serve-jsonrpc uds|xcall-shm ENDPOINT</c>. It prints <c>READY ADDRESS</c>
/// once it listens and serves until its standard input closes (the benchmark closes it, or dies).
/// </summary>
public static class PeerServers
{
    /// <summary>
    /// Entry point of a peer server process (named Run, not Main: a second Main beside the program's
    /// top-level statements is error CS7022 here). Returns <see langword="null"/> when <paramref name="args"/> is
    /// not a peer-server command line (so the caller goes on with its own), else the process exit code.
    /// </summary>
    public static int? Run(string[] args)
    {
        if (args.Length == 0 || args[0] is not ("--serve-grpc" or "--serve-jsonrpc"))
        {
            return null;
        }
        if (args.Length != 3 || args[1] is not ("tcp" or "uds" or "xcall-shm") || (args[0] == "--serve-jsonrpc" && args[1] == "tcp"))
        {
            Console.Error.WriteLine("usage: --serve-grpc tcp HOST:PORT | --serve-grpc uds|xcall-shm PATH|ADDRESS | --serve-jsonrpc uds|xcall-shm PATH|ADDRESS");
            return 2;
        }
        return args[0] == "--serve-grpc" ? ServeGrpc(args[1], args[2]) : ServeJsonRpc(args[1], args[2]);
    }

    private static int ServeGrpc(string transport, string endpoint)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [] });
        builder.Logging.ClearProviders();
        builder.Services.AddGrpc();
        // One service instance, as on the XCall server (grpc-dotnet would otherwise make one per call).
        builder.Services.AddSingleton<GrpcPeerService>();
        if (transport == "xcall-shm")
        {
            builder.WebHost.UseXCallTransport(); // beside Kestrel's sockets, with XCall's default stream options
        }
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            if (transport == "xcall-shm")
            {
                kestrel.ListenXCall(endpoint, o => o.Protocols = HttpProtocols.Http2);
            }
            else if (transport == "tcp")
            {
                IPEndPoint ip = IPEndPoint.Parse(endpoint);
                kestrel.Listen(ip, o => o.Protocols = HttpProtocols.Http2);
            }
            else
            {
                File.Delete(endpoint);
                kestrel.ListenUnixSocket(endpoint, o => o.Protocols = HttpProtocols.Http2);
            }
        });
        using WebApplication app = builder.Build();
        app.MapGrpcService<GrpcPeerService>();
        app.Start();
        // With port 0 the bound address is known only now: http://127.0.0.1:PORT.
        string address = transport == "tcp" ? app.Urls.First() : endpoint;
        WaitForStdinClose(address);
        app.StopAsync().GetAwaiter().GetResult();
        return 0;
    }

    /// <summary>
    /// StreamJsonRpc's defaults (header-delimited messages, JsonMessageFormatter over Newtonsoft.Json) on every
    /// connection accepted on a Unix domain socket (<c>uds</c>) or an XCall shared-memory stream (<c>xcall-shm</c>).
    /// </summary>
    private static int ServeJsonRpc(string transport, string endpoint)
    {
        IDisposable listener;
        Func<Task<Stream?>> accept;
        if (transport == "uds")
        {
            File.Delete(endpoint);
            var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            socket.Bind(new UnixDomainSocketEndPoint(endpoint));
            socket.Listen();
            (listener, accept) = (socket, async () =>
            {
                try
                {
                    return new NetworkStream(await socket.AcceptAsync().ConfigureAwait(false), ownsSocket: true);
                }
                catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
                {
                    return null;
                }
            });
        }
        else
        {
            XCallStreamListener xcall = XCallStreams.Listen(endpoint);
            (listener, accept) = (xcall, async () =>
            {
                try
                {
                    return await xcall.AcceptAsync().ConfigureAwait(false);
                }
                catch (ObjectDisposedException)
                {
                    return null;
                }
            });
        }
        using (listener)
        {
            var service = new JsonRpcPeerService();
            _ = Task.Run(async () =>
            {
                while (await accept().ConfigureAwait(false) is Stream connection)
                {
                    JsonRpc.Attach(connection, service);
                }
            });
            WaitForStdinClose(endpoint);
        }
        return 0;
    }

    private static void WaitForStdinClose(string address)
    {
        Console.WriteLine($"READY {address}");
        Console.Out.Flush();
        while (Console.In.ReadLine() is not null)
        {
        }
    }
}

/// <summary>The gRPC service: the same work as <see cref="CallCostService"/> does for <c>int</c> and <c>byte</c>.</summary>
internal sealed class GrpcPeerService : PeerCallCost.PeerCallCostBase
{
    private static readonly Task<Nothing> s_nothing = Task.FromResult(new Nothing());
    private int _sink;

    public int Sink => _sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public override Task<Nothing> TestInt(IntRequest request, ServerCallContext context)
    {
        _sink += request.Value;
        return s_nothing;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public override Task<Nothing> TestBytes(BytesRequest request, ServerCallContext context)
    {
        _sink += request.Data.Span[^1];
        return s_nothing;
    }
}

/// <summary>The StreamJsonRpc target: methods <c>TestInt</c> and <c>TestBytes</c>, the same work again.</summary>
internal sealed class JsonRpcPeerService
{
    private int _sink;

    public int Sink => _sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestInt(int value) => _sink += value;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestBytes(byte[] data) => _sink += data[^1];
}
