using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace XCall.Transport.Shm.Interop;

/// <summary>The few libc entry points the transport needs that .NET does not expose.</summary>
internal static unsafe partial class Libc
{
    private const string LibraryName = "libc";

    public const int AtFdCwd = -100;
    public const int AtSymlinkNoFollow = 0x100;
    public const int AtEmptyPath = 0x1000;
    public const uint StatxBasicStats = 0x7ff;

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

    [LibraryImport(LibraryName, EntryPoint = "syscall")]
    public static partial long Syscall(long number, void* address, int operation, int value, void* timeout, void* address2, int value3);

    [LibraryImport(LibraryName, EntryPoint = "fchown", SetLastError = true)]
    public static partial int FChown(SafeFileHandle fd, uint owner, uint group);

    [LibraryImport(LibraryName, EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Statx(int dirFd, string path, int flags, uint mask, byte* buffer);

    [LibraryImport(LibraryName, EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Statx(SafeFileHandle dirFd, string path, int flags, uint mask, byte* buffer);

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

    /// <summary>Owner uid and mode bits of an open file.</summary>
    public static bool TryGetOwnerAndMode(SafeFileHandle file, out uint uid, out uint mode)
    {
        byte* buffer = stackalloc byte[256];
        uid = mode = 0;
        try
        {
            return OperatingSystem.IsLinux() && Statx(file, "", AtEmptyPath, StatxBasicStats, buffer) == 0 && Decode(buffer, out uid, out mode);
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
}
