using Grpc.Core;
using XCall.Streams.Tests.Greet;

namespace XCall.Streams.Tests;

/// <summary>A plain grpc-dotnet service, written as for Kestrel's sockets.</summary>
public sealed class GreeterService : Greeter.GreeterBase
{
    public override Task<HelloReply> SayHello(HelloRequest request, ServerCallContext context) =>
        Task.FromResult(new HelloReply { Message = $"Hello {request.Name}" });

    public override async Task SayHellos(HelloRequest request, IServerStreamWriter<HelloReply> responseStream, ServerCallContext context)
    {
        for (int i = 0; i < request.Count; i++)
        {
            await responseStream.WriteAsync(new HelloReply { Message = $"Hello {request.Name} #{i}" }).ConfigureAwait(false);
        }
    }
}
