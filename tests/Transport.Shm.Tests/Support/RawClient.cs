using System.Buffers.Binary;
using System.Net.Sockets;
using Microsoft.Win32.SafeHandles;
using XCall.Transport.Shm.Rendezvous;

namespace XCall.Transport.Shm.Tests.Support;

/// <summary>A client that speaks the handshake by hand, so that it can stop or misbehave where a real one would not.</summary>
internal sealed class RawClient : IDisposable
{
    private RawClient(Socket socket) => Socket = socket;

    public Socket Socket { get; }

    public static RawClient Connect(string socketPath)
    {
        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        socket.Connect(new UnixDomainSocketEndPoint(socketPath));
        return new RawClient(socket);
    }

    /// <summary>The hello a real client of this version sends.</summary>
    public static byte[] Hello(int ringSize = ShmOptions.MinRingSize)
    {
        byte[] hello = new byte[Handshake.HelloLength];
        Handshake.WriteHello(hello, ringSize, flags: 0);
        return hello;
    }

    public void SendHello() => Socket.Send(Hello());

    /// <summary>The server's answer to the hello: its status byte and, after a 'Y', the ring capacity and
    /// the segment's descriptor.</summary>
    public (byte Status, int Capacity, SafeFileHandle? Memory) ReceiveReply()
    {
        byte[] status = new byte[1];
        Assert.Equal(1, DescriptorPassing.Receive(Socket, status, out SafeFileHandle? memory));
        if (status[0] != Handshake.Accepted)
        {
            return (status[0], 0, memory);
        }
        byte[] fields = new byte[Handshake.AcceptedFieldsLength];
        Handshake.ReceiveExactly(Socket, fields);
        return (status[0], BinaryPrimitives.ReadInt32LittleEndian(fields), memory);
    }

    public void Acknowledge() => Socket.Send([Handshake.Acknowledged, 0]);

    /// <summary>Completes when the server closes this connection (end of stream or reset).</summary>
    public async Task<bool> DroppedAsync()
    {
        try
        {
            return await Socket.ReceiveAsync(new byte[1]) == 0;
        }
        catch (SocketException)
        {
            return true;
        }
    }

    public void Dispose() => Socket.Dispose();
}
