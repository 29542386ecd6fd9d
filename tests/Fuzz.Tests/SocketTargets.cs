using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using XCall.Runtime;
using XCall.Transport;
using XCall.Transport.Shm;
using XCall.Transport.Tcp;

namespace XCall.Fuzz.Tests;

/// <summary>
/// Targets "tcp" and "shm": the bytes of one input sent by a raw client to a real listener in this process
/// (the tcp preamble and the frames after it; the shm rendezvous handshake), then the sending side closed.
/// The server must close the connection in the end; a listener thread that throws ends the process, which
/// the fuzzer reports as a crash.
/// </summary>
public static class SocketTargets
{
    private static readonly TimeSpan Hang = TimeSpan.FromSeconds(10);
    private static readonly Lazy<TcpChannelListener> s_tcp = new(StartTcp);
    private static readonly Lazy<ShmListener> s_shm = new(StartShm);

    public static void Tcp(ReadOnlySpan<byte> input)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        socket.Connect(s_tcp.Value.LocalEndpoint);
        SendAndDrain(socket, input, "tcp");
    }

    public static void Shm(ReadOnlySpan<byte> input)
    {
        using var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        socket.Connect(new UnixDomainSocketEndPoint(s_shm.Value.SocketPath));
        SendAndDrain(socket, input, "shm");
    }

    /// <summary>Seeds for "tcp": a preamble, then each recorded call frame behind its length prefix.</summary>
    public static IEnumerable<(string Name, byte[] Input)> TcpSeeds()
    {
        byte[] preamble = new byte[8];
        BinaryPrimitives.WriteUInt32LittleEndian(preamble, 0x4C414358); // "XCAL"
        BinaryPrimitives.WriteUInt16LittleEndian(preamble.AsSpan(4), 1);
        yield return ("preamble", preamble);
        foreach ((string name, byte[] frame) in FrameTargets.Calls)
        {
            byte[] input = new byte[8 + 4 + frame.Length];
            preamble.CopyTo(input, 0);
            BinaryPrimitives.WriteInt32LittleEndian(input.AsSpan(8), frame.Length - FrameHeader.Size);
            frame.CopyTo(input, 12);
            yield return (name, input);
        }
    }

    /// <summary>Seeds for "shm": a valid version-4 hello and its acknowledgement, and the hello alone.</summary>
    public static IEnumerable<(string Name, byte[] Input)> ShmSeeds()
    {
        byte[] hello = new byte[40];
        BinaryPrimitives.WriteUInt64LittleEndian(hello, 0x3148_4D48_534C_4358); // "XCLSHMH1"
        BinaryPrimitives.WriteInt32LittleEndian(hello.AsSpan(8), 4);
        BinaryPrimitives.WriteInt32LittleEndian(hello.AsSpan(12), Environment.ProcessId);
        BinaryPrimitives.WriteInt32LittleEndian(hello.AsSpan(16), 64 * 1024);
        yield return ("hello", hello);
        yield return ("hello-ack", [.. hello, (byte)'A', 0]);
    }

    private static void SendAndDrain(Socket socket, ReadOnlySpan<byte> input, string target)
    {
        try
        {
            socket.Send(input);
            socket.Shutdown(SocketShutdown.Send);
        }
        catch (SocketException)
        {
            // The server closed first (it refused the start of the input): what is checked is that it closes.
        }
        socket.ReceiveTimeout = (int)Hang.TotalMilliseconds;
        byte[] sink = new byte[4096];
        try
        {
            while (socket.Receive(sink) > 0)
            {
            }
        }
        catch (SocketException ex) when (ex.SocketErrorCode == SocketError.TimedOut)
        {
            throw new TimeoutException($"The {target} server did not close a connection within {Hang.TotalSeconds} s of the client's end of input.");
        }
        catch (SocketException)
        {
            // Reset by the server: closed.
        }
    }

    private static TcpChannelListener StartTcp()
    {
        TcpChannelListener listener = TcpTransport.Listen(new IPEndPoint(IPAddress.Loopback, 0));
        var serve = new Thread(() =>
        {
            while (true)
            {
                FrameChannel channel = listener.Accept();
                var connection = new XCallConnection(channel, new ConnectionOptions { DispatchMode = DispatchMode.Inline });
                connection.ExposeRoot(new FuzzSurface(), ContractRegistry.Get<IFuzzSurface>().Dispatcher);
                connection.Closed += (_, _) => connection.Dispose();
                connection.Start();
            }
        }) { IsBackground = true, Name = "fuzz tcp accept" };
        serve.Start();
        return listener;
    }

    private static ShmListener StartShm()
    {
        ShmListener listener = ShmTransport.Listen($"xcall-fuzz-{Environment.ProcessId}");
        var serve = new Thread(() =>
        {
            while (true)
            {
                listener.Accept().Dispose(); // the handshake is what is fuzzed; the rings are another target's
            }
        }) { IsBackground = true, Name = "fuzz shm accept" };
        serve.Start();
        return listener;
    }
}
