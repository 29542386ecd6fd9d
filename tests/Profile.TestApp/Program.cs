using System.Globalization;
using XCall;
using XCall.Runtime;
using XCall.Tests.Contracts;

// A target for xcall-profile's end-to-end tests: serves IShapes over an in-process channel pair and,
// for every "GO n" line on stdin, makes exactly n Add calls and n / 2 Echo("hola") calls through the
// framed client. Prints "READY <pid>" once connected and "DONE" after each batch; exits when stdin closes.
// No call is made before the first GO, so a session without GO sees no XCall traffic.

(InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair("testapp");
using var server = new XCallServer().Add<IShapes>(new Shapes());
server.Attach(serverChannel);
using var client = new XCallConnection(clientChannel);
client.Start();
IShapes shapes = client.GetService<IShapes>();

Console.Out.WriteLine($"READY {Environment.ProcessId}");
Console.Out.Flush();

while (Console.In.ReadLine() is { } line)
{
    string[] words = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
    if (words.Length != 2 || words[0] != "GO" || !int.TryParse(words[1], NumberStyles.None, CultureInfo.InvariantCulture, out int count))
    {
        Console.Error.WriteLine($"unknown command: {line} (expected: GO <count>)");
        continue;
    }
    for (int i = 0; i < count; i++)
    {
        if (shapes.Add(i, 1) != i + 1)
        {
            throw new InvalidOperationException("Add returned a wrong sum.");
        }
    }
    for (int i = 0; i < count / 2; i++)
    {
        if (shapes.Echo("hola") != "hola")
        {
            throw new InvalidOperationException("Echo returned a wrong string.");
        }
    }
    Console.Out.WriteLine("DONE");
    Console.Out.Flush();
}
