using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace XCall.Transport.Tcp.Interop;

/// <summary>The libc entry point the TCP transport needs that .NET does not expose: a receive that never blocks.</summary>
internal static unsafe partial class Libc
{
    private const string LibraryName = "libc";
    private const int MsgDontWait = 0x40;
    private const int EAgain = 11;
    private const int EIntr = 4;

    /// <summary>
    /// recv(2) with MSG_DONTWAIT on a socket left in blocking mode: the count of bytes received (at least one), 0 when
    /// the peer closed its side, <see cref="SocketLink.NothingYet"/> when nothing has arrived (or the call was interrupted),
    /// <see cref="SocketLink.Failed"/> on any other error (the caller's blocking receive then reports it).
    /// </summary>
    public static int ReceiveNow(SafeSocketHandle socket, Span<byte> buffer)
    {
        fixed (byte* p = buffer)
        {
            nint n = Recv(socket, p, (nuint)buffer.Length, MsgDontWait);
            if (n >= 0)
            {
                return (int)n;
            }
        }
        int errno = System.Runtime.InteropServices.Marshal.GetLastPInvokeError();
        return errno is EAgain or EIntr ? SocketLink.NothingYet : SocketLink.Failed;
    }

    [LibraryImport(LibraryName, EntryPoint = "recv", SetLastError = true)]
    private static partial nint Recv(SafeSocketHandle socket, byte* buffer, nuint length, int flags);
}
