using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;

namespace XCall.Transport.Tcp.Tests.Support;

/// <summary>A plain socket that speaks (or mis-speaks) the wire by hand.</summary>
internal sealed class RawPeer : IDisposable
{
    private RawPeer(Socket socket) => Socket = socket;

    public Socket Socket { get; }

    public static async Task<RawPeer> ConnectAsync(int port)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port));
        return new RawPeer(socket);
    }

    public static RawPeer Wrap(Socket socket) => new(socket);

    /// <summary>
    /// A client channel connected over loopback to a raw peer that has exchanged the preambles and says nothing
    /// more unless told to.
    /// </summary>
    public static async Task<(RawPeer Peer, FrameChannel Channel)> AcceptHandshakenAsync(TcpOptions options)
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        Task<FrameChannel> connecting = TcpTransport.ConnectAsync("127.0.0.1", ((IPEndPoint)listener.LocalEndPoint!).Port, options);
        RawPeer peer = Wrap(await listener.AcceptAsync());
        await peer.HandshakeAsync();
        return (peer, await connecting);
    }

    public static byte[] Preamble(uint magic = 0x4C414358, ushort version = 1, ushort reserved = 0)
    {
        byte[] bytes = new byte[8];
        BinaryPrimitives.WriteUInt32LittleEndian(bytes, magic);
        BinaryPrimitives.WriteUInt16LittleEndian(bytes.AsSpan(4), version);
        BinaryPrimitives.WriteUInt16LittleEndian(bytes.AsSpan(6), reserved);
        return bytes;
    }

    /// <summary>The 28-byte prefix of a frame: length, then a header written field by field.</summary>
    public static byte[] Prefix(int length, FrameKind kind, ulong callId, byte version = 1, ulong objectId = 0, uint methodId = 7, ushort flags = 0)
    {
        byte[] bytes = new byte[28];
        BinaryPrimitives.WriteInt32LittleEndian(bytes, length);
        bytes[4] = (byte)kind;
        bytes[5] = version;
        BinaryPrimitives.WriteUInt16LittleEndian(bytes.AsSpan(6), flags);
        BinaryPrimitives.WriteUInt32LittleEndian(bytes.AsSpan(8), methodId);
        BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(12), callId);
        BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(20), objectId);
        return bytes;
    }

    public async Task SendAsync(byte[] bytes) => await Socket.SendAsync(bytes);

    public async Task<byte[]> ReceiveExactlyAsync(int count)
    {
        byte[] bytes = new byte[count];
        int got = 0;
        while (got < count)
        {
            int n = await Socket.ReceiveAsync(bytes.AsMemory(got));
            if (n == 0)
            {
                throw new EndOfStreamException($"EOF after {got} of {count} bytes");
            }
            got += n;
        }
        return bytes;
    }

    /// <summary>Completes the transport preamble as a client or server would.</summary>
    public async Task HandshakeAsync()
    {
        await SendAsync(Preamble());
        byte[] theirs = await ReceiveExactlyAsync(8);
        Assert.Equal(Preamble(), theirs);
    }

    /// <summary>Reads one frame: its header fields and payload.</summary>
    public async Task<(FrameKind Kind, ulong CallId, byte[] Payload)> ReadFrameAsync()
    {
        byte[] prefix = await ReceiveExactlyAsync(28);
        int length = BinaryPrimitives.ReadInt32LittleEndian(prefix);
        byte[] payload = await ReceiveExactlyAsync(length);
        return ((FrameKind)prefix[4], BinaryPrimitives.ReadUInt64LittleEndian(prefix.AsSpan(12)), payload);
    }

    /// <summary>Reads and drops bytes until the peer closes (true) or resets (true).</summary>
    public async Task<bool> WaitForCloseAsync()
    {
        byte[] sink = new byte[4096];
        try
        {
            while (await Socket.ReceiveAsync(sink.AsMemory()).AsTask().WaitAsync(Timeouts.Long) > 0)
            {
            }
            return true;
        }
        catch (SocketException)
        {
            return true;
        }
    }

    public void Dispose() => Socket.Dispose();
}
