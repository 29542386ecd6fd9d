using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

public sealed class WireFormatTests
{
    [Fact]
    public void Frame_header_struct_is_exactly_the_24_wire_bytes()
    {
        Assert.Equal(FrameHeader.Size, Unsafe.SizeOf<FrameHeader>());
        Assert.Equal(28, FrameCodec.PrefixSize);
    }

    [Fact]
    public async Task Channel_writes_the_preamble_then_length_header_payload_little_endian()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        Task<FrameChannel> connecting = TcpTransport.ConnectAsync("127.0.0.1", ((IPEndPoint)listener.LocalEndPoint!).Port);
        using RawPeer raw = RawPeer.Wrap(await listener.AcceptAsync());
        await raw.SendAsync(RawPeer.Preamble());
        Assert.Equal("XCAL"u8.ToArray(), await raw.ReceiveExactlyAsync(4));
        Assert.Equal(new byte[] { 1, 0, 0, 0 }, await raw.ReceiveExactlyAsync(4));
        using FrameChannel channel = await connecting;

        var header = new FrameHeader(FrameKind.OneWay, 0x0102030405060708, 0x1112131415161718, 0xA1A2A3A4, flags: 0x0B0C);
        var writer = new XCall.Marshal.MarshalWriter(channel.BeginFrame(header));
        writer.WriteBlock([0xEE, 0xFF, 0x00]);
        writer.Flush();
        channel.CommitFrame();

        byte[] prefix = await raw.ReceiveExactlyAsync(28);
        Assert.Equal(3, BinaryPrimitives.ReadInt32LittleEndian(prefix));
        Assert.Equal((byte)FrameKind.OneWay, prefix[4]);
        Assert.Equal(FrameHeader.CurrentVersion, prefix[5]);
        Assert.Equal(0x0B0C, BinaryPrimitives.ReadUInt16LittleEndian(prefix.AsSpan(6)));
        Assert.Equal(0xA1A2A3A4u, BinaryPrimitives.ReadUInt32LittleEndian(prefix.AsSpan(8)));
        Assert.Equal(0x0102030405060708UL, BinaryPrimitives.ReadUInt64LittleEndian(prefix.AsSpan(12)));
        Assert.Equal(0x1112131415161718UL, BinaryPrimitives.ReadUInt64LittleEndian(prefix.AsSpan(20)));
        Assert.Equal(new byte[] { 0xEE, 0xFF, 0x00 }, await raw.ReceiveExactlyAsync(3));
    }

    [Fact]
    public void Options_are_checked_up_front()
    {
        var loopback = new IPEndPoint(IPAddress.Loopback, 0);
        Assert.Throws<ArgumentException>(() => TcpTransport.Listen(loopback, new TcpOptions
        {
            HeartbeatInterval = TimeSpan.FromSeconds(5),
            HeartbeatTimeout = TimeSpan.FromSeconds(1),
        }));
        Assert.Throws<ArgumentOutOfRangeException>(() => TcpTransport.Listen(loopback, new TcpOptions { MaxFrameSize = 0 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => TcpTransport.Listen(loopback, new TcpOptions { HandshakeGrace = TimeSpan.FromSeconds(-2) }));
        Assert.Throws<ArgumentOutOfRangeException>(() => TcpTransport.Connect("127.0.0.1", 0));
    }
}
