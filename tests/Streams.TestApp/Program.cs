switch (args)
{
    case ["serve", string address]:
    {
        // The greeter's server as an ASP.NET Core program would write it; only the listen line is XCall's.
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseXCallTransport();
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.ListenXCall(address, o => o.Protocols = HttpProtocols.Http2));
        builder.Services.AddGrpc();
        await using WebApplication app = builder.Build();
        app.MapGrpcService<GreeterService>();
        await app.StartAsync();
        Console.WriteLine($"serving {address} in process {Environment.ProcessId}");
        await Console.In.ReadLineAsync(); // a line or the end of input stops it
        await app.StopAsync();
        return 0;
    }
    case ["call", string address, string name]:
    {
        // The greeter's client as the template writes it; only the handler's ConnectCallback is XCall's.
        using GrpcChannel channel = GrpcChannel.ForAddress("http://greeter", new GrpcChannelOptions
        {
            HttpHandler = new SocketsHttpHandler { ConnectCallback = XCallStreams.ConnectCallback(address) },
        });
        var client = new Greeter.GreeterClient(channel);
        Console.WriteLine((await client.SayHelloAsync(new HelloRequest { Name = name })).Message);
        using AsyncServerStreamingCall<HelloReply> stream = client.SayHellos(new HelloRequest { Name = name, Count = 3 });
        await foreach (HelloReply reply in stream.ResponseStream.ReadAllAsync())
        {
            Console.WriteLine(reply.Message);
        }
        return 0;
    }
    default:
        Console.Error.WriteLine("usage: XCall.Streams.TestApp serve ADDRESS | call ADDRESS NAME");
        return 2;
}
