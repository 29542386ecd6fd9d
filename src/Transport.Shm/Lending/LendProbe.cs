using System.Runtime.InteropServices;
using XCall.Transport.Shm.Interop;

namespace XCall.Transport.Shm.Lending;

/// <summary>
/// Whether one process may read another's memory (<c>process_vm_readv</c>: same user, and no ptrace restriction
/// such as Yama or a security module in the way), found by trying: each process keeps an 8-byte word of a random
/// value, sends its address and value in the handshake, and the peer reads it.
/// </summary>
internal static unsafe class LendProbe
{
    private static readonly ulong* s_word = CreateWord();

    /// <summary>The address of this process's probe word.</summary>
    public static ulong Address => (ulong)s_word;

    /// <summary>The value in it.</summary>
    public static ulong Value => *s_word;

    /// <summary>True when <paramref name="pid"/>'s word at <paramref name="address"/> reads as <paramref name="value"/>.</summary>
    public static bool CanRead(int pid, ulong address, ulong value)
    {
        if (address == 0 || pid <= 0 || !OperatingSystem.IsLinux())
        {
            return false;
        }
        ulong read = 0;
        try
        {
            return Libc.ReadProcessMemory(pid, address, new Span<byte>(&read, sizeof(ulong))) == sizeof(ulong) && read == value;
        }
        catch (EntryPointNotFoundException)
        {
            return false;
        }
    }

    private static ulong* CreateWord()
    {
        var word = (ulong*)NativeMemory.Alloc(sizeof(ulong)); // lives as long as the process
        *word = (ulong)Random.Shared.NextInt64() | 1;
        return word;
    }
}
