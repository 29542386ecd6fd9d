using System.Net.Sockets;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace XCall.Transport.Shm.Interop;

/// <summary>The few libc entry points the transport needs that .NET does not expose.</summary>
internal static unsafe partial class Libc
{
    private const string LibraryName = "libc";

    public const int AtFdCwd = -100;
    public const int AtSymlinkNoFollow = 0x100;
    public const uint StatxBasicStats = 0x7ff;

    public const uint MemfdCloseOnExec = 0x1;
    public const uint MemfdAllowSealing = 0x2;
    public const uint MemfdNoExecSeal = 0x8;
    public const int FAddSeals = 1033;
    public const int FGetSeals = 1034;
    public const int SealSeal = 0x1;
    public const int SealShrink = 0x2;
    public const int SealGrow = 0x4;
    public const int SealWrite = 0x8;
    public const int SealFutureWrite = 0x10;

    public const int SolSocket = 1;
    public const int ScmRights = 1;
    public const int MsgCtrunc = 0x8;
    public const int MsgDontWait = 0x40;
    public const int MsgNoSignal = 0x4000;
    public const int MsgCmsgCloseOnExec = 0x4000_0000;
    public const int EIntr = 4;
    public const int EAgain = 11;
    public const int EInval = 22;

    static Libc()
    {
        // "libc.so" is a linker script on glibc systems; point the import at the real library.
        NativeLibrary.SetDllImportResolver(typeof(Libc).Assembly, static (name, assembly, path) =>
            name == LibraryName && OperatingSystem.IsLinux() && NativeLibrary.TryLoad("libc.so.6", assembly, path, out IntPtr handle)
                ? handle
                : IntPtr.Zero);
        EffectiveUid = OperatingSystem.IsWindows() ? 0 : GetEffectiveUid();
    }

    /// <summary>This process's effective user id (what SO_PEERCRED reports to our peers).</summary>
    public static uint EffectiveUid { get; }

    [LibraryImport(LibraryName, EntryPoint = "geteuid")]
    private static partial uint GetEffectiveUid();

    [LibraryImport(LibraryName, EntryPoint = "memfd_create", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial SafeFileHandle MemfdCreate(string name, uint flags);

    [LibraryImport(LibraryName, EntryPoint = "fallocate", SetLastError = true)]
    public static partial int FAllocate(SafeFileHandle fd, int mode, long offset, long length);

    [LibraryImport(LibraryName, EntryPoint = "fcntl", SetLastError = true)]
    public static partial int FControl(SafeFileHandle fd, int command, int argument);

    [LibraryImport(LibraryName, EntryPoint = "sendmsg", SetLastError = true)]
    public static partial nint SendMessage(SafeSocketHandle socket, MessageHeader* message, int flags);

    [LibraryImport(LibraryName, EntryPoint = "recvmsg", SetLastError = true)]
    public static partial nint ReceiveMessage(SafeSocketHandle socket, MessageHeader* message, int flags);

    [LibraryImport(LibraryName, EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Statx(int dirFd, string path, int flags, uint mask, byte* buffer);

    /// <summary>Owner uid and mode bits of <paramref name="path"/> (not following a final symlink);
    /// false when statx is unavailable or fails.</summary>
    public static bool TryGetOwnerAndMode(string path, out uint uid, out uint mode)
    {
        byte* buffer = stackalloc byte[256];
        uid = mode = 0;
        try
        {
            return OperatingSystem.IsLinux() && Statx(AtFdCwd, path, AtSymlinkNoFollow, StatxBasicStats, buffer) == 0 && Decode(buffer, out uid, out mode);
        }
        catch (EntryPointNotFoundException)
        {
            return false;
        }
    }

    // struct statx: stx_uid at 20, stx_mode (16 bits) at 28; the layout is the same on every architecture.
    private static bool Decode(byte* buffer, out uint uid, out uint mode)
    {
        uid = *(uint*)(buffer + 20);
        mode = *(ushort*)(buffer + 28);
        return true;
    }

    [LibraryImport(LibraryName, EntryPoint = "process_vm_readv", SetLastError = true)]
    private static partial nint ProcessVmReadv(int pid, IoVector* local, nuint localCount, IoVector* remote, nuint remoteCount, nuint flags);

    [LibraryImport(LibraryName, EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);

    /// <summary>errno ESRCH: no such process.</summary>
    public const int ESrch = 3;

    /// <summary>Copies <c>destination.Length</c> bytes at <paramref name="address"/> in process <paramref name="pid"/>
    /// into <paramref name="destination"/>; the count read, or -1 with errno set.</summary>
    public static long ReadProcessMemory(int pid, ulong address, Span<byte> destination)
    {
        fixed (byte* target = destination)
        {
            var local = new IoVector { Base = target, Length = (nuint)destination.Length };
            var remote = new IoVector { Base = (void*)address, Length = (nuint)destination.Length };
            return ProcessVmReadv(pid, &local, 1, &remote, 1, 0);
        }
    }

    /// <summary>False once <paramref name="pid"/> is gone (kill(pid, 0) fails with ESRCH).</summary>
    public static bool IsProcessAlive(int pid) => Kill(pid, 0) == 0 || LastErrorNumber != ESrch;

    /// <summary>The text and number of the last P/Invoke's errno.</summary>
    public static string LastErrorText()
    {
        int errno = LastErrorNumber;
        return $"{System.Runtime.InteropServices.Marshal.GetPInvokeErrorMessage(errno)}, errno {errno}";
    }

    /// <summary>errno of the last P/Invoke declared with SetLastError (XCall.Marshal hides the Marshal class here).</summary>
    public static int LastErrorNumber => System.Runtime.InteropServices.Marshal.GetLastPInvokeError();

    /// <summary>An IOException for the errno of the last P/Invoke.</summary>
    public static IOException LastError(string what)
    {
        int errno = LastErrorNumber;
        return new IOException($"{what} failed: {System.Runtime.InteropServices.Marshal.GetPInvokeErrorMessage(errno)} (errno {errno})", errno);
    }

    /// <summary>struct iovec.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct IoVector
    {
        public void* Base;
        public nuint Length;
    }

    /// <summary>struct msghdr (Linux).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct MessageHeader
    {
        public void* Name;
        public uint NameLength;
        public IoVector* Vectors;
        public nuint VectorCount;
        public void* Control;
        public nuint ControlLength;
        public int Flags;
    }

    /// <summary>struct cmsghdr (Linux); its data follows at <see cref="ControlDataOffset"/>.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct ControlHeader
    {
        public nuint Length;
        public int Level;
        public int Type;
    }

    /// <summary>CMSG_ALIGN(sizeof(struct cmsghdr)): where a control message's data starts.</summary>
    public static int ControlDataOffset => ControlAlign(sizeof(ControlHeader));

    /// <summary>CMSG_SPACE(length): the room one control message with <paramref name="length"/> data bytes takes.</summary>
    public static int ControlSpace(int length) => ControlDataOffset + ControlAlign(length);

    private static int ControlAlign(int length) => (length + sizeof(nuint) - 1) & ~(sizeof(nuint) - 1);
}
