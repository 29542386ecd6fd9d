using System.Runtime.InteropServices;
using XCall.Marshal;
using XCall.Runtime;
using XCall.Transport;

namespace XCall.Fuzz.Tests;

/// <summary>
/// The frame handler and the generated argument readers behind it: a server connection (inline dispatch, so
/// the call runs on the fuzzing thread) serving <see cref="FuzzSurface"/>, given one frame per input.
/// </summary>
public static class FrameTargets
{
    private static readonly Lazy<IReadOnlyList<(string Name, byte[] Frame)>> s_calls = new(RecordCalls);

    /// <summary>The call frames a real client sends for a fixed script of calls, one per method of <see cref="IFuzzSurface"/>.</summary>
    public static IReadOnlyList<(string Name, byte[] Frame)> Calls => s_calls.Value;

    /// <summary>Target "frame": <paramref name="input"/> is a whole frame, header then payload.</summary>
    public static void Frame(ReadOnlySpan<byte> input)
    {
        using var server = new Server();
        try
        {
            server.Channel.Deliver(input);
        }
        catch (XCallProtocolException)
        {
            // The transport closes this connection: the outcome a malformed frame must have.
            FuzzTarget.CountRefusal();
        }
    }

    /// <summary>Target "args": the first byte picks a method of <see cref="IFuzzSurface"/>, the rest is its payload
    /// under that method's real header, so every input reaches a generated argument reader.</summary>
    public static void Arguments(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty)
        {
            return;
        }
        byte[] call = Calls[input[0] % Calls.Count].Frame;
        byte[] frame = new byte[FrameHeader.Size + input.Length - 1];
        call.AsSpan(0, FrameHeader.Size).CopyTo(frame);
        input[1..].CopyTo(frame.AsSpan(FrameHeader.Size));
        Frame(frame);
    }

    /// <summary>Seeds for "frame": the recorded call frames.</summary>
    public static IEnumerable<(string Name, byte[] Input)> FrameSeeds() => Calls;

    /// <summary>Seeds for "args": each recorded payload behind its method's index.</summary>
    public static IEnumerable<(string Name, byte[] Input)> ArgumentSeeds() =>
        Calls.Select((c, i) => (c.Name, (byte[])[(byte)i, .. c.Frame.AsSpan(FrameHeader.Size)]));

    private static List<(string Name, byte[] Frame)> RecordCalls()
    {
        var calls = new List<(string Name, byte[] Frame)>();
        using var server = new Server();
        var clientChannel = new DirectChannel("direct://fuzz/server");
        string current = "";
        clientChannel.Sent = frame =>
        {
            FrameHeader header = MemoryMarshal.Read<FrameHeader>(frame);
            if (header.Kind is FrameKind.Call or FrameKind.OneWay)
            {
                calls.Add((current, frame));
            }
            server.Channel.Deliver(frame);
        };
        server.Channel.Sent = frame => clientChannel.Deliver(frame);
        using var client = new XCallConnection(clientChannel);
        client.Start();
        IFuzzSurface surface = client.GetProxy<IFuzzSurface>();

        var cycle = new Tree { Value = 1, Children = [] };
        cycle.Left = new Tree { Value = 2, Left = cycle, Children = [cycle, null] };
        var link = new Link { Name = "a", Next = new Link { Name = "b" } };
        int a = 1, b = 2;
        (string Name, Action Call)[] script =
        [
            ("add", () => surface.Add(1, 2)),
            ("echo", () => surface.Echo("hello")),
            ("ints", () => surface.Ints([1, 2, 3])),
            ("strings", () => surface.Strings(["a", null, "bc"])),
            ("map", () => surface.Map(new() { [1] = "x", [2] = null })),
            ("longs", () => surface.Longs([5, 6, 7])),
            ("walk", () => surface.Walk(cycle)),
            ("area", () => surface.Area([new Disc { Radius = 1 }, new Box { Side = 2, Inner = new Disc() }, null])),
            ("keep", () => surface.Keep(new Entry("a", new Entry("b", null)))),
            ("links", () => surface.Links([link, link.Next, null])),
            ("swap", () => surface.Swap(ref a, ref b)),
            ("later", () => surface.LaterAsync(5).GetAwaiter().GetResult()),
            ("post", () => surface.Post("message")),
        ];
        foreach ((string name, Action call) in script)
        {
            current = name;
            call();
        }
        return calls;
    }

    /// <summary>A server connection over a <see cref="DirectChannel"/> whose replies go nowhere unless told.</summary>
    private sealed class Server : IDisposable
    {
        public Server()
        {
            Channel = new DirectChannel("direct://fuzz/client");
            Connection = new XCallConnection(Channel, new ConnectionOptions { DispatchMode = DispatchMode.Inline });
            Connection.ExposeRoot(new FuzzSurface(), ContractRegistry.Get<IFuzzSurface>().Dispatcher);
            Connection.Start();
        }

        public DirectChannel Channel { get; }

        public XCallConnection Connection { get; }

        public void Dispose() => Connection.Dispose();
    }
}
