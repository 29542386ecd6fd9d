using System.Net.Sockets;
using Microsoft.Win32.SafeHandles;
using XCall.Transport.Shm.Interop;

namespace XCall.Transport.Shm.Rendezvous;

/// <summary>
/// Hands a file descriptor to the peer of a Unix stream socket (SCM_RIGHTS). The descriptor travels with
/// the first byte of the data it is sent with, and arrives with the first read of that byte.
/// </summary>
internal static unsafe class DescriptorPassing
{
    /// <summary>Room for more descriptors than the one expected, so that a peer sending several is caught
    /// (and all of them closed) rather than some silently dropped.</summary>
    private const int MaxDescriptors = 4;

    /// <summary>Sends <paramref name="data"/> (at least one byte) with a copy of <paramref name="descriptor"/>.</summary>
    /// <exception cref="IOException">The socket refused the message (peer gone).</exception>
    public static void Send(Socket socket, ReadOnlySpan<byte> data, SafeFileHandle descriptor)
    {
        int space = Libc.ControlSpace(sizeof(int));
        byte* control = stackalloc byte[space];
        new Span<byte>(control, space).Clear();
        var header = (Libc.ControlHeader*)control;
        header->Length = (nuint)(Libc.ControlDataOffset + sizeof(int));
        header->Level = Libc.SolSocket;
        header->Type = Libc.ScmRights;
        bool added = false;
        try
        {
            descriptor.DangerousAddRef(ref added);
            *(int*)(control + Libc.ControlDataOffset) = (int)descriptor.DangerousGetHandle();
            fixed (byte* bytes = data)
            {
                var vector = new Libc.IoVector { Base = bytes, Length = (nuint)data.Length };
                var message = new Libc.MessageHeader { Vectors = &vector, VectorCount = 1, Control = control, ControlLength = (nuint)space };
                nint sent;
                do
                {
                    sent = Libc.SendMessage(socket.SafeHandle, &message, Libc.MsgNoSignal);
                }
                while (sent < 0 && Libc.LastErrorNumber == Libc.EIntr);
                if (sent < 0)
                {
                    throw Libc.LastError("sendmsg");
                }
                if (sent < data.Length)
                {
                    socket.Send(data[(int)sent..]); // the descriptor went with the first byte
                }
            }
        }
        finally
        {
            if (added)
            {
                descriptor.DangerousRelease();
            }
        }
    }

    /// <summary>
    /// Reads up to <paramref name="buffer"/>.Length bytes, waiting at most the socket's receive timeout, and
    /// the descriptor sent with them if any (close-on-exec). Returns 0 at end of stream.
    /// </summary>
    /// <exception cref="SocketException">The wait timed out (<see cref="SocketError.TimedOut"/>).</exception>
    /// <exception cref="IOException">The read failed, or the peer sent more than one descriptor.</exception>
    public static int Receive(Socket socket, Span<byte> buffer, out SafeFileHandle? descriptor)
    {
        descriptor = null;
        int space = Libc.ControlSpace(MaxDescriptors * sizeof(int));
        byte* control = stackalloc byte[space];
        int timeoutMicroseconds = socket.ReceiveTimeout <= 0 ? -1 : (int)Math.Min(int.MaxValue, socket.ReceiveTimeout * 1000L);
        fixed (byte* bytes = buffer)
        {
            var vector = new Libc.IoVector { Base = bytes, Length = (nuint)buffer.Length };
            var message = new Libc.MessageHeader { Vectors = &vector, VectorCount = 1, Control = control, ControlLength = (nuint)space };
            nint received;
            while (true)
            {
                // Wait with poll and read without blocking: the socket may be in either mode, and poll keeps
                // the handshake's timeout.
                if (!socket.Poll(timeoutMicroseconds, SelectMode.SelectRead))
                {
                    throw new SocketException((int)SocketError.TimedOut);
                }
                received = Libc.ReceiveMessage(socket.SafeHandle, &message, Libc.MsgDontWait | Libc.MsgCmsgCloseOnExec);
                if (received >= 0 || Libc.LastErrorNumber is not (Libc.EIntr or Libc.EAgain))
                {
                    break;
                }
                message.ControlLength = (nuint)space;
            }
            if (received < 0)
            {
                throw Libc.LastError("recvmsg");
            }
            List<SafeFileHandle> descriptors = TakeDescriptors(control, (int)message.ControlLength);
            if (descriptors.Count > 1 || (message.Flags & Libc.MsgCtrunc) != 0)
            {
                descriptors.ForEach(static d => d.Dispose());
                throw new IOException("the peer sent more file descriptors than expected");
            }
            descriptor = descriptors.Count == 1 ? descriptors[0] : null;
            return (int)received;
        }
    }

    /// <summary>Every descriptor in the SCM_RIGHTS messages of a received control buffer, each owned by
    /// a handle (so none leaks, whatever the caller then refuses).</summary>
    private static List<SafeFileHandle> TakeDescriptors(byte* control, int length)
    {
        var descriptors = new List<SafeFileHandle>();
        int offset = 0;
        while (offset + Libc.ControlDataOffset <= length)
        {
            var header = (Libc.ControlHeader*)(control + offset);
            int messageLength = (int)header->Length;
            if (messageLength < Libc.ControlDataOffset || offset + messageLength > length)
            {
                break;
            }
            if (header->Level == Libc.SolSocket && header->Type == Libc.ScmRights)
            {
                int* fds = (int*)(control + offset + Libc.ControlDataOffset);
                for (int i = 0; i < (messageLength - Libc.ControlDataOffset) / sizeof(int); i++)
                {
                    descriptors.Add(new SafeFileHandle(fds[i], ownsHandle: true));
                }
            }
            offset += Libc.ControlSpace(messageLength - Libc.ControlDataOffset);
        }
        return descriptors;
    }
}
