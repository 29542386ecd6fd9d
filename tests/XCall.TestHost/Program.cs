// A server process for the end-to-end tests: serves IShapes, IProbe, IGreeter, ICallbacks, IActivation (per call), IStreams and IOneWayLog at the address given,
// prints "READY <address>" (with the real TCP port), and runs until its standard input closes.
//   XCall.TestHost serve <address> [--inline] [--no-shm]
using XCall;
using XCall.Tests.Contracts;

if (args.Length < 2 || args[0] != "serve")
{
    Console.Error.WriteLine("usage: XCall.TestHost serve <address> [--inline] [--no-shm]");
    return 2;
}

var connection = new ConnectionOptions { DispatchMode = args.Contains("--inline") ? DispatchMode.Inline : DispatchMode.Concurrent };
var options = new RemoteOptions { Connection = connection, ServeSharedMemoryToo = !args.Contains("--no-shm") };
using var server = new XCallServer(connection).Add<IShapes>(new Shapes()).Add<IProbe>(new Probe()).Add<IGreeter>(new Greeter())
    .Add<ICallbacks>(new Callbacks()).AddPerCall<IActivation>(() => new Activation()).Add<IStreams>(new Streams())
    .Add<IOneWayLog>(new OneWayLog());
using RemoteListener listener = Remote.Serve(args[1], server, options);
Console.WriteLine($"READY {(object?)listener.TcpAddress ?? args[1]}");
Console.Out.Flush();
while (Console.In.ReadLine() is not null)
{
}
return 0;
