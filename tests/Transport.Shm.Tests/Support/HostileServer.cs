using System.Buffers.Binary;
using System.Net.Sockets;
using Microsoft.Win32.SafeHandles;
using XCall.Transport.Shm.Rendezvous;

namespace XCall.Transport.Shm.Tests.Support;

/// <summary>A rendezvous socket that answers the handshake with memory of its own choosing, as a hostile
/// (or broken) server could.</summary>
internal sealed class HostileServer : IDisposable
{
    private readonly Socket _listener;

    public HostileServer(string directory, string name)
    {
        Directory.CreateDirectory(directory, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        _listener = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        _listener.Bind(new UnixDomainSocketEndPoint(Path.Combine(directory, name + ".sock")));
        _listener.Listen(1);
    }

    /// <summary>
    /// Takes one client, reads its hello and answers 'Y' for rings of <paramref name="capacity"/> with
    /// <paramref name="memory"/> (none when null). True when the client acknowledged, false when it hung up.
    /// </summary>
    public Task<bool> AnswerAsync(int capacity, SafeFileHandle? memory) => Task.Run(() =>
    {
        using Socket client = _listener.Accept();
        Handshake.ReceiveExactly(client, new byte[Handshake.HelloLength]);
        byte[] reply = new byte[1 + Handshake.AcceptedFieldsLength];
        reply[0] = Handshake.Accepted;
        BinaryPrimitives.WriteInt32LittleEndian(reply.AsSpan(1), capacity);
        if (memory is null)
        {
            client.Send(reply);
        }
        else
        {
            DescriptorPassing.Send(client, reply, memory);
        }
        byte[] ack = new byte[1];
        try
        {
            return client.Receive(ack) == 1 && ack[0] == Handshake.Acknowledged;
        }
        catch (SocketException)
        {
            return false;
        }
    });

    public void Dispose() => _listener.Dispose();
}
