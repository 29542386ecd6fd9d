using System.Net;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using StreamJsonRpc;
using XCall.AspNetCore;
using XCall.Streams.Tests.Greet;

namespace XCall.Streams.Tests;

/// <summary>grpc-dotnet and StreamJsonRpc, their service and client code unchanged, over XCall streams.</summary>
public sealed class ForeignStackTests
{
    [Fact]
    public async Task A_grpc_greeter_answers_over_shm_beside_a_tcp_socket_endpoint()
    {
        string address = $"shm://greeter-{Guid.NewGuid():N}";
        await using WebApplication app = StartGreeter(kestrel =>
        {
            kestrel.ListenXCall(address, o => o.Protocols = HttpProtocols.Http2);
            kestrel.Listen(IPAddress.Loopback, 0, o => o.Protocols = HttpProtocols.Http2); // Kestrel's own sockets, side by side
        });

        using GrpcChannel shm = GrpcChannel.ForAddress("http://greeter", new GrpcChannelOptions
        {
            HttpHandler = new SocketsHttpHandler { ConnectCallback = XCallStreams.ConnectCallback(address) },
        });
        var client = new Greeter.GreeterClient(shm);
        HelloReply reply = await client.SayHelloAsync(new HelloRequest { Name = "shm" });
        Assert.Equal("Hello shm", reply.Message);

        // A server stream of many messages, and many unary calls in flight at once on one connection.
        using AsyncServerStreamingCall<HelloReply> stream = client.SayHellos(new HelloRequest { Name = "s", Count = 500 });
        var messages = new List<string>();
        await foreach (HelloReply item in stream.ResponseStream.ReadAllAsync())
        {
            messages.Add(item.Message);
        }
        Assert.Equal(Enumerable.Range(0, 500).Select(i => $"Hello s #{i}"), messages);
        HelloReply[] many = await Task.WhenAll(Enumerable.Range(0, 64).Select(i => client.SayHelloAsync(new HelloRequest { Name = $"n{i}" }).ResponseAsync));
        Assert.Equal(Enumerable.Range(0, 64).Select(i => $"Hello n{i}"), many.Select(r => r.Message));

        // The same service over the socket endpoint Kestrel bound beside the XCall one.
        string tcpUrl = app.Urls.Single(u => u.StartsWith("http://127.0.0.1", StringComparison.Ordinal));
        using GrpcChannel tcp = GrpcChannel.ForAddress(tcpUrl);
        Assert.Equal("Hello tcp", (await new Greeter.GreeterClient(tcp).SayHelloAsync(new HelloRequest { Name = "tcp" })).Message);
    }

    [Fact]
    public async Task A_grpc_call_to_an_shm_address_nobody_serves_fails_as_unavailable()
    {
        using GrpcChannel channel = GrpcChannel.ForAddress("http://greeter", new GrpcChannelOptions
        {
            HttpHandler = new SocketsHttpHandler { ConnectCallback = XCallStreams.ConnectCallback($"shm://nobody-{Guid.NewGuid():N}") },
        });
        RpcException error = await Assert.ThrowsAsync<RpcException>(async () =>
            await new Greeter.GreeterClient(channel).SayHelloAsync(new HelloRequest { Name = "x" }));
        Assert.Equal(StatusCode.Unavailable, error.StatusCode);
    }

    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task StreamJsonRpc_calls_over_an_xcall_stream(string transport)
    {
        using XCallStreamTests.StreamPair pair = await XCallStreamTests.PairAsync(transport);
        using JsonRpc server = JsonRpc.Attach(pair.Server, new Calculator());
        using JsonRpc client = JsonRpc.Attach(pair.Client);
        Assert.Equal(5, await client.InvokeAsync<int>(nameof(Calculator.Add), 2, 3));
        int[] sums = await Task.WhenAll(Enumerable.Range(0, 100).Select(i => client.InvokeAsync<int>(nameof(Calculator.Add), i, i)));
        Assert.Equal(Enumerable.Range(0, 100).Select(i => 2 * i), sums);
        string big = new('x', 300_000); // several data frames
        Assert.Equal(big.Length, await client.InvokeAsync<int>(nameof(Calculator.Length), big));
        StreamJsonRpc.RemoteInvocationException error = await Assert.ThrowsAsync<StreamJsonRpc.RemoteInvocationException>(() => client.InvokeAsync<int>(nameof(Calculator.Fail)));
        Assert.Contains("refused", error.Message, StringComparison.Ordinal);
    }

    internal static WebApplication StartGreeter(Action<KestrelServerOptions> listen)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseXCallTransport();
        builder.WebHost.ConfigureKestrel(listen);
        builder.Services.AddGrpc();
        WebApplication app = builder.Build();
        app.MapGrpcService<GreeterService>();
        app.StartAsync().GetAwaiter().GetResult();
        return app;
    }

    private sealed class Calculator
    {
        public int Add(int a, int b) => a + b;

        public int Length(string text) => text.Length;

        public int Fail() => throw new InvalidOperationException("refused on purpose");
    }
}
