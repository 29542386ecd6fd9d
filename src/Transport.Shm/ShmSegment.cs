using System.IO.MemoryMappedFiles;
using Microsoft.Win32.SafeHandles;
using XCall.Transport.Shm.Interop;
using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm;

/// <summary>
/// The shared memory of one connection: an anonymous memory file (memfd) holding a 4 KiB header and the
/// two rings. The server creates it, sizes it and seals it against shrinking and growing, then hands the
/// descriptor to the client over the rendezvous socket; each side maps it and closes its descriptor. It
/// never has a name in /dev/shm, and the kernel frees it when the last mapping goes.
/// </summary>
/// <remarks>
/// The seals are what make mapping the peer's memory safe: a file that can shrink under a mapping turns
/// the next access into SIGBUS (a fatal AccessViolationException), so a side maps memory only when the
/// kernel guarantees its size. Layout: header (magic, version, ring capacity, server pid, client pid) at 0;
/// the control blocks of the client-to-server and server-to-client rings at 1024 and 2048; their data areas
/// at 4096 and 4096 + capacity.
/// </remarks>
internal sealed unsafe class ShmSegment : IDisposable
{
    /// <summary>Every memfd name starts with this (it shows in /proc/PID/fd and /proc/PID/maps).</summary>
    public const string NamePrefix = "xcall-";

    /// <summary>The seals a segment carries: its size is fixed and no seal can be added.</summary>
    public const int Seals = Libc.SealShrink | Libc.SealGrow | Libc.SealSeal;

    private const ulong Magic = 0x314D_4853_4C4C_4358; // "XCLLSHM1"
    private const int Version = 2; // of the rings' record format (RingLayout): a peer of another version is refused
    private const int HeaderLength = 4096;
    private const int ClientToServerControl = 1024;
    private const int ServerToClientControl = 2048;
    private const int LoanSlotsOffset = 3072; // two tables of 512 bytes, up to the end of the header

    private readonly MemoryMappedViewAccessor _view;
    private readonly byte* _base;
    private int _disposed;

    private ShmSegment(SafeFileHandle memory, int capacity)
    {
        RingCapacity = capacity;
        Length = LengthFor(capacity);
        // The view keeps the mapping; the map object and the descriptor are not needed once it exists.
        using (var map = MemoryMappedFile.CreateFromFile(memory, null, Length, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: true))
        {
            _view = map.CreateViewAccessor(0, Length, MemoryMappedFileAccess.ReadWrite);
        }
        byte* pointer = null;
        _view.SafeMemoryMappedViewHandle.AcquirePointer(ref pointer);
        _base = pointer + _view.PointerOffset;
        ClientToServer = new ShmRing(_base + ClientToServerControl, _base + HeaderLength, capacity);
        ServerToClient = new ShmRing(_base + ServerToClientControl, _base + HeaderLength + capacity, capacity);
    }

    public int RingCapacity { get; }

    public long Length { get; }

    public ShmRing ClientToServer { get; }

    public ShmRing ServerToClient { get; }

    /// <summary>Bytes of a segment whose rings hold <paramref name="capacity"/> bytes each.</summary>
    public static long LengthFor(int capacity) => HeaderLength + 2L * capacity;

    /// <summary>
    /// Creates, seals and maps a new segment (server side). <paramref name="memory"/> is its descriptor, to
    /// be passed to the client and then closed by the caller. Tests pass other <paramref name="seals"/> to
    /// play a server that does not seal.
    /// </summary>
    /// <exception cref="IOException">The kernel refused the memory (no memfd, out of memory, too many files).</exception>
    public static ShmSegment Create(string name, int capacity, out SafeFileHandle memory, int seals = Seals)
    {
        memory = CreateMemory(NamePrefix + name, LengthFor(capacity), seals);
        try
        {
            var segment = new ShmSegment(memory, capacity);
            segment.InitializeHeader();
            return segment;
        }
        catch
        {
            memory.Dispose();
            throw;
        }
    }

    /// <summary>
    /// A memfd of <paramref name="length"/> bytes, allocated now (so a shortage fails here, not as SIGBUS at
    /// first touch) and carrying <paramref name="seals"/>.
    /// </summary>
    internal static SafeFileHandle CreateMemory(string name, long length, int seals)
    {
        if (!OperatingSystem.IsLinux())
        {
            throw new PlatformNotSupportedException("The XCall shared-memory transport needs Linux (memfd_create and file seals).");
        }
        SafeFileHandle memory = Libc.MemfdCreate(name, Libc.MemfdCloseOnExec | Libc.MemfdAllowSealing | Libc.MemfdNoExecSeal);
        if (memory.IsInvalid && Libc.LastErrorNumber == Libc.EInval)
        {
            memory.Dispose();
            memory = Libc.MemfdCreate(name, Libc.MemfdCloseOnExec | Libc.MemfdAllowSealing); // a kernel before 6.3
        }
        try
        {
            if (memory.IsInvalid)
            {
                throw Libc.LastError("memfd_create");
            }
            if (Libc.FAllocate(memory, 0, 0, length) != 0)
            {
                throw Libc.LastError($"allocating {length} bytes of shared memory");
            }
            if (seals != 0 && Libc.FControl(memory, Libc.FAddSeals, seals) != 0)
            {
                throw Libc.LastError("sealing the shared memory");
            }
            return memory;
        }
        catch
        {
            memory.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Maps the segment the server sent (client side) once the kernel guarantees that it cannot change size
    /// and is as large as announced. The caller closes <paramref name="memory"/> afterwards.
    /// </summary>
    /// <exception cref="InvalidDataException">The memory is not a sealed segment of the announced size.</exception>
    public static ShmSegment Open(SafeFileHandle memory, int capacity)
    {
        if (!OperatingSystem.IsLinux())
        {
            throw new PlatformNotSupportedException("The XCall shared-memory transport needs Linux (memfd_create and file seals).");
        }
        int seals = Libc.FControl(memory, Libc.FGetSeals, 0);
        if (seals < 0)
        {
            throw new InvalidDataException("the descriptor is not sealable shared memory (F_GET_SEALS failed)");
        }
        if ((seals & Seals) != Seals || (seals & (Libc.SealWrite | Libc.SealFutureWrite)) != 0)
        {
            throw new InvalidDataException($"the segment's seals are 0x{seals:x}: it must be sealed against shrinking, growing and further seals, and be writable");
        }
        long expected = LengthFor(capacity);
        long actual = RandomAccess.GetLength(memory);
        if (actual != expected)
        {
            throw new InvalidDataException($"the segment is {actual} bytes, expected {expected}");
        }
        var segment = new ShmSegment(memory, capacity);
        try
        {
            segment.CheckHeader();
            *(int*)(segment._base + 20) = Environment.ProcessId;
            return segment;
        }
        catch
        {
            segment.Dispose();
            throw;
        }
    }

    /// <summary>
    /// The loan slots (<see cref="Lending.LoanSlots"/>) of one direction, in the header after the control blocks:
    /// those of the arrays the client lends the server, or the server the client.
    /// </summary>
    public ulong* LoanSlots(bool clientToServer) => (ulong*)(_base + (clientToServer ? LoanSlotsOffset : LoanSlotsOffset + Lending.LoanSlots.TableLength));

    /// <summary>Keeps the mapping while a reader outside the channel's threads uses it; false once disposed.</summary>
    public bool TryAddRef()
    {
        bool added = false;
        try
        {
            _view.SafeMemoryMappedViewHandle.DangerousAddRef(ref added);
        }
        catch (ObjectDisposedException)
        {
            return false;
        }
        return added;
    }

    /// <summary>Ends a <see cref="TryAddRef"/>: the mapping goes once disposed and released by every user.</summary>
    public void ReleaseRef() => _view.SafeMemoryMappedViewHandle.DangerousRelease();

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        _view.SafeMemoryMappedViewHandle.ReleasePointer();
        _view.Dispose();
    }

    private void InitializeHeader()
    {
        *(ulong*)_base = Magic;
        *(int*)(_base + 8) = Version;
        *(int*)(_base + 12) = RingCapacity;
        *(int*)(_base + 16) = Environment.ProcessId;
    }

    private void CheckHeader()
    {
        if (*(ulong*)_base != Magic || *(int*)(_base + 8) != Version || *(int*)(_base + 12) != RingCapacity)
        {
            throw new InvalidDataException($"the segment does not hold an XCall shared-memory connection of version {Version}");
        }
    }
}
