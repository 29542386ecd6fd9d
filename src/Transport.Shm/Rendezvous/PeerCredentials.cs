using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace XCall.Transport.Shm.Rendezvous;

/// <summary>The process at the other end of a Unix socket, as the kernel recorded it at connect time.</summary>
internal readonly record struct PeerCredentials(int Pid, uint Uid, uint Gid)
{
    private const int SolSocket = 1;
    private const int SoPeerCred = 17;

    /// <summary>Reads SO_PEERCRED (Linux); null where the option does not exist.</summary>
    public static PeerCredentials? Get(Socket socket)
    {
        if (!OperatingSystem.IsLinux())
        {
            return null;
        }
        Span<byte> buffer = stackalloc byte[12];
        int length = socket.GetRawSocketOption(SolSocket, SoPeerCred, buffer);
        if (length < 12)
        {
            return null;
        }
        return new PeerCredentials(
            MemoryMarshal.Read<int>(buffer),
            MemoryMarshal.Read<uint>(buffer[4..]),
            MemoryMarshal.Read<uint>(buffer[8..]));
    }
}
