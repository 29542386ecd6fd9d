using System.Globalization;
using System.IO.MemoryMappedFiles;
using XCall.Transport.Shm.Interop;
using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm;

/// <summary>
/// The shared memory of one connection: a 0600 file in /dev/shm (or the runtime directory where there is
/// none) holding a 4 KiB header and the two rings. The server creates it, the client maps it by name, and
/// the server unlinks the name as soon as the client has mapped it, so nothing outlives the processes.
/// </summary>
/// <remarks>
/// Layout: header (magic, version, ring capacity, server pid, client pid) at 0; the control blocks of the
/// client-to-server and server-to-client rings at 1024 and 2048; their data areas at 4096 and
/// 4096 + capacity. File names are <c>xcall-&lt;pid&gt;-&lt;start time&gt;-&lt;n&gt;</c>: a listener removes
/// files whose creator (pid and start time) no longer runs.
/// </remarks>
internal sealed unsafe class ShmSegment : IDisposable
{
    /// <summary>Every segment file name starts with this.</summary>
    public const string FilePrefix = "xcall-";

    private const ulong Magic = 0x314D_4853_4C4C_4358; // "XCLLSHM1"
    private const int Version = 1;
    private const int HeaderLength = 4096;
    private const int ClientToServerControl = 1024;
    private const int ServerToClientControl = 2048;

    private static readonly string s_identity = $"{Environment.ProcessId}-{ProcessStartTime(Environment.ProcessId) ?? 0}";
    private static int s_sequence;

    private readonly FileStream _file;
    private readonly MemoryMappedFile _map;
    private readonly MemoryMappedViewAccessor _view;
    private readonly byte* _base;
    private int _unlinked;
    private int _disposed;

    private ShmSegment(string path, FileStream file, int capacity, bool unlinked)
    {
        Path = path;
        RingCapacity = capacity;
        Length = file.Length;
        _file = file;
        _unlinked = unlinked ? 1 : 0;
        _map = MemoryMappedFile.CreateFromFile(file, null, Length, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: true);
        _view = _map.CreateViewAccessor(0, Length, MemoryMappedFileAccess.ReadWrite);
        byte* pointer = null;
        _view.SafeMemoryMappedViewHandle.AcquirePointer(ref pointer);
        _base = pointer + _view.PointerOffset;
        ClientToServer = new ShmRing(_base + ClientToServerControl, _base + HeaderLength, capacity);
        ServerToClient = new ShmRing(_base + ServerToClientControl, _base + HeaderLength + capacity, capacity);
    }

    public string Path { get; }

    public int RingCapacity { get; }

    public long Length { get; }

    public ShmRing ClientToServer { get; }

    public ShmRing ServerToClient { get; }

    /// <summary>Where segments are created: /dev/shm, else the runtime directory.</summary>
    public static string DirectoryFor(ShmOptions options) => Directory.Exists("/dev/shm") ? "/dev/shm" : options.RuntimeDirectory;

    /// <summary>Creates and maps a new segment (server side).</summary>
    public static ShmSegment Create(string directory, int capacity)
    {
        if (OperatingSystem.IsWindows())
        {
            throw new PlatformNotSupportedException("The XCall shared-memory transport needs a Unix system.");
        }
        long length = HeaderLength + 2L * capacity;
        for (int attempt = 0; ; attempt++)
        {
            string path = System.IO.Path.Combine(directory, $"{FilePrefix}{s_identity}-{Interlocked.Increment(ref s_sequence)}");
            FileStream file;
            try
            {
                file = new FileStream(path, new FileStreamOptions
                {
                    Mode = FileMode.CreateNew,
                    Access = FileAccess.ReadWrite,
                    Share = FileShare.ReadWrite | FileShare.Delete,
                    UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite,
                    PreallocationSize = length, // fail now (ENOSPC) rather than SIGBUS on first touch
                });
            }
            catch (IOException) when (attempt < 16 && File.Exists(path))
            {
                continue; // a leftover with our name (pid reuse): take the next one
            }
            try
            {
                file.SetLength(length);
                var segment = new ShmSegment(path, file, capacity, unlinked: false);
                segment.InitializeHeader();
                return segment;
            }
            catch
            {
                file.Dispose();
                TryDelete(path);
                throw;
            }
        }
    }

    /// <summary>Maps an existing segment (client side) after checking it is what the server announced.</summary>
    public static ShmSegment Open(string path, int capacity, uint serverUid)
    {
        long length = HeaderLength + 2L * capacity;
        var file = new FileStream(path, new FileStreamOptions
        {
            Mode = FileMode.Open,
            Access = FileAccess.ReadWrite,
            Share = FileShare.ReadWrite | FileShare.Delete,
        });
        try
        {
            if (Libc.TryGetOwnerAndMode(file.SafeFileHandle, out uint owner, out uint mode))
            {
                if (owner != serverUid && owner != Libc.EffectiveUid)
                {
                    throw new UnauthorizedAccessException($"Segment {path} belongs to uid {owner}, not to the server (uid {serverUid}).");
                }
                if ((mode & 0x1FF) != 0x180)
                {
                    throw new UnauthorizedAccessException($"Segment {path} has mode {Convert.ToString(mode & 0x1FF, 8)}, not 600.");
                }
            }
            if (file.Length != length)
            {
                throw new InvalidDataException($"Segment {path} is {file.Length} bytes, expected {length}.");
            }
            var segment = new ShmSegment(path, file, capacity, unlinked: true);
            segment.CheckHeader();
            *(int*)(segment._base + 20) = Environment.ProcessId;
            return segment;
        }
        catch
        {
            file.Dispose();
            throw;
        }
    }

    /// <summary>Gives the segment to <paramref name="uid"/> (a root server serving another user's client).</summary>
    public bool TryChangeOwner(uint uid) => Libc.FChown(_file.SafeFileHandle, uid, uint.MaxValue) == 0;

    /// <summary>Removes the name; the memory lives on while mapped.</summary>
    public void Unlink()
    {
        if (Interlocked.Exchange(ref _unlinked, 1) == 0)
        {
            TryDelete(Path);
        }
    }

    /// <summary>Deletes segment files left by processes that no longer run.</summary>
    public static void SweepStale(string directory)
    {
        if (!OperatingSystem.IsLinux() || !Directory.Exists(directory))
        {
            return;
        }
        IEnumerable<string> files;
        try
        {
            files = Directory.EnumerateFiles(directory, FilePrefix + "*");
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return;
        }
        foreach (string path in files)
        {
            string[] parts = System.IO.Path.GetFileName(path)[FilePrefix.Length..].Split('-');
            if (parts.Length == 3
                && int.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out int pid)
                && long.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out long start)
                && ProcessStartTime(pid) != start)
            {
                TryDelete(path);
            }
        }
    }

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        _view.SafeMemoryMappedViewHandle.ReleasePointer();
        _view.Dispose();
        _map.Dispose();
        _file.Dispose();
        Unlink();
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
            throw new InvalidDataException($"Segment {Path} does not hold an XCall shared-memory connection of version {Version}.");
        }
    }

    /// <summary>The start time of <paramref name="pid"/> in clock ticks since boot (/proc/pid/stat field 22), or null if it does not run.</summary>
    internal static long? ProcessStartTime(int pid)
    {
        try
        {
            string stat = File.ReadAllText($"/proc/{pid}/stat");
            // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
            string[] fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return long.Parse(fields[19], CultureInfo.InvariantCulture);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException or ArgumentOutOfRangeException)
        {
            return null;
        }
    }

    private static void TryDelete(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Someone else's file, or already gone.
        }
    }
}
