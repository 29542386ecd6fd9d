namespace XCall.Transport.Shm.Interop;

/// <summary>
/// <c>process_vm_readv</c>: copies bytes from another process's memory into this one's (cross-memory attach; same
/// user, and no ptrace restriction such as Yama in the way). Public for the layers that move bulk data between
/// processes of one machine themselves (the communicator's rendezvous), so the system call has one wrapper.
/// </summary>
public static class ProcessMemory
{
    /// <summary>errno EPERM: the kernel does not let this process read the other's memory.</summary>
    public const int NotPermitted = 1;

    /// <summary>errno ESRCH: no such process.</summary>
    public const int NoSuchProcess = 3;

    /// <summary>
    /// Copies <c>destination.Length</c> bytes at <paramref name="address"/> in process <paramref name="pid"/> into
    /// <paramref name="destination"/>; false, with the errno in <paramref name="error"/>, when they cannot all be read
    /// (0 there when the system call has none, off Linux or for a short read).
    /// </summary>
    public static bool TryRead(int pid, ulong address, Span<byte> destination, out int error)
    {
        error = 0;
        if (!OperatingSystem.IsLinux() || pid <= 0)
        {
            return false;
        }
        int done = 0;
        while (done < destination.Length)
        {
            long read;
            try
            {
                read = Libc.ReadProcessMemory(pid, address + (ulong)done, destination[done..]);
            }
            catch (EntryPointNotFoundException)
            {
                return false;
            }
            if (read <= 0)
            {
                error = read < 0 ? Libc.LastErrorNumber : 0;
                return false;
            }
            done += (int)read; // one call moves at most about 2 GiB: a longer block takes several
        }
        return true;
    }
}
